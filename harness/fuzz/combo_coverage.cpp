#include "harness/fuzz/combo_coverage.h"

#include <cmath>
#include <functional>
#include <sstream>

#include "compiler/ir/op_schema.h"

namespace gbc {
namespace {

bool non_finite_number(const Node& n) {
  for (const Arg& a : n.args)
    if (!a.is_value() && a.scalar.kind == ScalarKind::Float && !std::isfinite(a.scalar.f)) return true;
  if (auto v = n.attr_scalar("value")) return !std::isfinite(v->to_double());
  return false;
}

}  // namespace

void ComboCoverage::add(const Model& model) {
  ++graphs_;
  for (int64_t k = 0; k < model.dtype_variants(); ++k) {
    Graph g;
    Diagnostics d;
    if (model.graph_for_variant(k, g, d)) add_graph(g, model);
  }
}

void ComboCoverage::add_graph(const Graph& graph, const Model& model) {
  const std::string layout = model.check.layouts == "any" || model.check.recompile_sequence ? "strided" : "contiguous";
  // Values NaN/Inf can reach, in program order (nested blocks first, as they run).
  std::set<ValueId> special;
  if (model.check.special_values > 0)
    for (const GraphInput& in : graph.inputs)
      if (is_floating(graph.type(in.value).dtype)) special.insert(in.value);
  std::set<Combo> seen;
  std::function<void(const Block&)> walk = [&](const Block& block) {
    for (const Node& n : block.nodes) {
      for (const Block& inner : n.blocks) walk(inner);
      bool reaches = non_finite_number(n);
      DType dtype = DType::Float32;
      bool typed = false;
      for (const Arg& a : n.args) {
        if (!a.is_value()) continue;
        reaches = reaches || special.count(a.value);
        const ValueType& t = graph.type(a.value);
        if (!typed && t.is_tensor()) {
          dtype = t.dtype;
          typed = true;
        }
      }
      if (!typed && n.output() != kNoValue && graph.type(n.output()).is_tensor()) {
        dtype = graph.type(n.output()).dtype;
        typed = true;
      }
      for (ValueId o : n.outputs)
        if (reaches && graph.type(o).is_tensor() && is_floating(graph.type(o).dtype)) special.insert(o);
      if (typed) seen.insert({n.op, dtype, layout, reaches});
    }
  };
  walk(graph.body);
  for (const Combo& c : seen) ++counts_[c];
}

std::string ComboCoverage::report() const {
  std::set<std::string> ops;
  std::set<std::pair<std::string, DType>> pairs;
  for (const auto& [c, n] : counts_) {
    ops.insert(std::get<0>(c));
    pairs.insert({std::get<0>(c), std::get<1>(c)});
  }
  std::vector<std::string> missing;
  for (const OpSchema& s : all_op_schemas())
    if (s.name != "aten" && !ops.count(s.name)) missing.push_back(s.name);
  std::ostringstream out;
  out << "graphs: " << graphs_ << "\n"
      << "ops: " << ops.size() << " of " << ops.size() + missing.size() << (missing.empty() ? "" : " (never made:");
  for (const std::string& m : missing) out << " " << m;
  out << (missing.empty() ? "" : ")") << "\n"
      << "op x dtype: " << pairs.size() << "\n"
      << "op x dtype x layout x special: " << counts_.size() << "\n";
  for (const auto& [c, n] : counts_)
    out << std::get<0>(c) << " " << dtype_name(std::get<1>(c)) << " " << std::get<2>(c) << " "
        << (std::get<3>(c) ? "special" : "finite") << " " << n << "\n";
  return out.str();
}

}  // namespace gbc
