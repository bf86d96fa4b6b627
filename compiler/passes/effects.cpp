#include "compiler/passes/effects.h"

#include <algorithm>
#include <functional>

#include "compiler/ir/generic_op.h"
#include "compiler/ir/op_schema.h"

namespace gbc {
namespace {

bool is_batch_norm_training(const Node& node) { return node.op == OpId::BatchNorm && node.attr_bool("training", false); }

bool intersects(const std::set<ValueId>& a, const std::set<ValueId>& b) {
  const std::set<ValueId>& small = a.size() <= b.size() ? a : b;
  const std::set<ValueId>& large = a.size() <= b.size() ? b : a;
  return std::any_of(small.begin(), small.end(), [&](ValueId v) { return large.count(v) != 0; });
}

}  // namespace

bool has_side_effect(const Node& node) {
  const OpSchema* schema = find_op_schema(node.op);
  GBC_INTERNAL_ASSERT(schema != nullptr, "no schema for op '" + op_name(node.op) + "'");
  if (is_generic_op(node)) {
    const GenericOpEffects e = generic_op_effects(node);
    return e.mutates || e.random;
  }
  switch (schema->cls) {
    case OpClass::Effect:
    case OpClass::InPlace:
    case OpClass::Random:
    case OpClass::Custom: return true;
    default: return is_batch_norm_training(node);
  }
}

std::vector<ValueId> mutated_args(const Node& node) {
  const OpSchema* schema = find_op_schema(node.op);
  if (is_generic_op(node) && generic_op_effects(node).mutates) {  // which of its tensors: any, to be safe
    std::vector<ValueId> tensors;
    for (const auto& a : node.args)
      if (a.is_value()) tensors.push_back(a.value);
    return tensors;
  }
  if (schema && schema->cls == OpClass::InPlace && !node.args.empty() && node.args[0].is_value())
    return {node.args[0].value};
  if (is_batch_norm_training(node) && node.args.size() == 5) return {node.args[3].value, node.args[4].value};
  return {};
}

std::vector<ValueId> alias_sources(const Graph& graph, const Node& node) {
  const OpSchema* schema = find_op_schema(node.op);
  GBC_INTERNAL_ASSERT(schema != nullptr, "no schema for op '" + op_name(node.op) + "'");
  std::vector<ValueId> tensors;
  for (const auto& a : node.args)
    if (a.is_value() && graph.type(a.value).is_tensor()) tensors.push_back(a.value);
  if (is_generic_op(node)) {
    const GenericOpEffects e = generic_op_effects(node);
    return e.returns_alias || e.mutates ? tensors : std::vector<ValueId>{};
  }
  switch (schema->cls) {
    case OpClass::View:
    case OpClass::Random:  // dropout returns its input when not training
    case OpClass::Custom: return tensors;
    case OpClass::InPlace: return tensors.empty() ? tensors : std::vector<ValueId>{tensors[0]};
    case OpClass::Cast: {
      // `to` the same dtype returns self.
      auto dtype = node.attr_dtype("dtype");
      if (!tensors.empty() && dtype && graph.type(tensors[0]).dtype == *dtype) return tensors;
      return {};
    }
    case OpClass::Control: {
      std::vector<ValueId> results;
      for (const auto& b : node.blocks) results.insert(results.end(), b.results.begin(), b.results.end());
      return results;
    }
    default: return {};
  }
}

AliasAnalysis::AliasAnalysis(const Graph& graph) : roots_(graph.values.size()) {
  for (size_t v = 0; v < roots_.size(); ++v) roots_[v] = {static_cast<ValueId>(v)};
  for (const auto& in : graph.inputs) input_roots_.insert(in.value);
  // Program order, nested blocks before the `if` that yields their results, so every operand's
  // roots are final when its user is reached.
  std::function<void(const Block&)> visit = [&](const Block& block) {
    for (const auto& n : block.nodes) {
      for (const auto& b : n.blocks) visit(b);
      for (ValueId m : mutated_args(n)) {
        const std::set<ValueId>& r = roots(m);
        mutated_roots_.insert(r.begin(), r.end());
      }
      std::vector<ValueId> sources = alias_sources(graph, n);
      if (sources.empty()) continue;
      std::set<ValueId> merged;
      for (ValueId s : sources) {
        const std::set<ValueId>& r = roots(s);
        merged.insert(r.begin(), r.end());
      }
      for (ValueId o : n.outputs) roots_[static_cast<size_t>(o)] = merged;
    }
  };
  visit(graph.body);
  for (ValueId o : graph.outputs) {
    const std::set<ValueId>& r = roots(o);
    output_roots_.insert(r.begin(), r.end());
  }
}

const std::set<ValueId>& AliasAnalysis::roots(ValueId v) const {
  GBC_INTERNAL_ASSERT(v >= 0 && static_cast<size_t>(v) < roots_.size(), "bad value id " + std::to_string(v));
  return roots_[static_cast<size_t>(v)];
}

bool AliasAnalysis::may_alias(ValueId a, ValueId b) const { return intersects(roots(a), roots(b)); }

bool AliasAnalysis::may_alias_graph_input(ValueId v) const { return intersects(roots(v), input_roots_); }

bool AliasAnalysis::may_alias_graph_output(ValueId v) const { return intersects(roots(v), output_roots_); }

bool AliasAnalysis::may_be_mutated(ValueId v) const { return intersects(roots(v), mutated_roots_); }

bool ReturnedStorage::returned(ValueId v) const {
  return aa_.may_alias_graph_output(v) || intersects(aa_.roots(v), substituted_roots_);
}

void ReturnedStorage::substitute(ValueId replaced, ValueId by) {
  if (!returned(replaced)) return;
  const std::set<ValueId>& r = aa_.roots(by);
  substituted_roots_.insert(r.begin(), r.end());
}

}  // namespace gbc
