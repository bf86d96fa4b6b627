#include "harness/fuzz/graph_generator.h"

#include <algorithm>

#include "compiler/ir/generic_op.h"
#include "compiler/ir/op_schema.h"
#include "harness/fuzz/op_builders.h"

namespace gbc {
namespace {

bool build(GraphBuilder& b, const OpSchema& op) {
  switch (op.cls) {
    case OpClass::Unary: return build_unary(b, op.name);
    case OpClass::Binary: return build_binary(b, op.name);
    case OpClass::Where: return build_where(b);
    case OpClass::Clamp: return build_clamp(b);
    case OpClass::Cast: return build_cast(b);
    case OpClass::Reduction: return build_reduction(b, op.name);
    case OpClass::Normalization: return build_normalization(b, op.name);
    case OpClass::Extern: return build_extern(b, op.name);
    case OpClass::View: return build_view(b, op.name);
    case OpClass::Cat: return build_cat(b);
    case OpClass::Creation: return build_full(b);
    case OpClass::Random: return build_dropout(b);
    case OpClass::Effect: return build_print(b);
    case OpClass::HostScalar: return build_item(b);
    case OpClass::Control: return build_if(b);
    case OpClass::DataDependent: return build_nonzero(b);
    case OpClass::Custom: return build_custom(b);
    case OpClass::InPlace:
      return (b.pattern(b.config().patterns.view_mutation) && build_view_mutation(b, op.name)) ||
             build_in_place(b, op.name);
  }
  return false;
}

// The first input spans every declared dim, so that each dim is bound by an input (as the
// loader requires of the dims a written model declares).
void add_first_input(GraphBuilder& b) {
  SymShape shape;
  for (const auto& [name, range] : b.graph().dims.ranges()) shape.push_back(DimExpr::symbol(name));
  if (static_cast<int>(shape.size()) < b.config().max_rank && b.chance(0.5)) shape.push_back(b.uniform_int(1, std::min<int64_t>(4, b.config().max_dim_size)));
  for (size_t i = shape.size(); i > 1; --i)
    std::swap(shape[i - 1], shape[static_cast<size_t>(b.uniform_int(0, static_cast<int64_t>(i) - 1))]);
  b.new_input(*b.random_dtype(), shape, Domain::Any, false);
}

}  // namespace

Model generate_model(uint64_t seed, const GeneratorConfig& config) {
  validate_generator_config(config);
  std::vector<const OpSchema*> ops;
  std::vector<double> cumulative;
  double total = 0;
  for (const auto& s : all_op_schemas()) {
    if (s.name == kGenericOp) continue;  // imported models' op (docs/importing.md), never generated
    double w = op_weight(config, s.name);
    if (w <= 0) continue;
    if (!config.allow_breaks && (s.name == "print" || s.name == "item" || s.name == "if" || s.name == "nonzero")) continue;
    total += w;
    ops.push_back(&s);
    cumulative.push_back(total);
  }
  if (ops.empty()) throw std::invalid_argument("generator config: every enabled op is a graph break, and allow_breaks is off");

  GraphBuilder b(seed, config);
  add_first_input(b);
  int target = static_cast<int>(b.uniform_int(config.min_nodes, config.max_nodes));
  // Any builder can fail in a given state (no value of the right kind, no room left); with the
  // usual op mix, elementwise ops on a fresh input always fit. A config whose few enabled ops
  // cannot fit (bmm alone with max_rank 2) stops once min_nodes is reached, else it is stuck.
  int failures = 0;
  while (b.node_count() < target && !(failures > 1000 && b.node_count() >= config.min_nodes)) {
    double u = b.uniform() * total;
    size_t i = static_cast<size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
    const OpSchema& op = *ops[std::min(i, ops.size() - 1)];
    if (build(b, op)) {
      failures = 0;
    } else if (++failures > 10000) {
      internal_error("the graph generator is stuck at " + std::to_string(b.node_count()) + " nodes (seed " +
                     std::to_string(seed) + "); do the enabled ops fit max_rank and max_numel?");
    }
  }
  return b.finish(seed);
}

}  // namespace gbc
