#include "compiler/runtime/region_graph.h"

#include "compiler/ir/retype.h"
#include "compiler/passes/effects.h"

namespace gbc {
namespace {

void collect_attr_symbols(const Node& node, std::set<std::string>& out) {
  for (const auto& [name, value] : node.attrs)
    if (const auto* shape = std::get_if<SymShape>(&value))
      for (const DimExpr& d : *shape) d.collect_symbols(out);
}

void substitute_node(Node& node, const DimBindings& values) {
  for (auto& [name, value] : node.attrs)
    if (auto* shape = std::get_if<SymShape>(&value)) *shape = substitute_dims(*shape, values);
  for (Block& b : node.blocks)
    for (Node& n : b.nodes) substitute_node(n, values);
}

}  // namespace

DimExpr substitute_dims(const DimExpr& expr, const DimBindings& values) {
  switch (expr.op()) {
    case DimExpr::Op::Const: return expr;
    case DimExpr::Op::Sym: {
      auto it = values.find(expr.name());
      return it == values.end() ? expr : DimExpr(it->second);
    }
    default: break;
  }
  DimExpr a = substitute_dims(expr.lhs(), values), b = substitute_dims(expr.rhs(), values);
  switch (expr.op()) {
    case DimExpr::Op::Add: return a + b;
    case DimExpr::Op::Sub: return a - b;
    case DimExpr::Op::Mul: return a * b;
    case DimExpr::Op::FloorDiv: return floordiv(a, b);
    case DimExpr::Op::CeilDiv: return ceildiv(a, b);
    case DimExpr::Op::Min: return min(a, b);
    case DimExpr::Op::Max: return max(a, b);
    default: internal_error("substitute_dims: unhandled dim expression " + expr.str());
  }
}

SymShape substitute_dims(const SymShape& shape, const DimBindings& values) {
  SymShape out;
  out.reserve(shape.size());
  for (const DimExpr& d : shape) out.push_back(substitute_dims(d, values));
  return out;
}

std::set<std::string> region_symbols(const Graph& graph, const Segment& region) {
  std::set<std::string> out;
  auto add_type = [&](ValueId v) {
    for (const DimExpr& d : graph.type(v).shape) d.collect_symbols(out);
  };
  for (ValueId v : region.inputs) add_type(v);
  for (size_t i : region.nodes) {
    const Node& n = graph.body.nodes[i];
    for (ValueId o : n.outputs) add_type(o);
    collect_attr_symbols(n, out);
  }
  return out;
}

Graph region_graph(const CapturedProgram& program, const Segment& region, const DimBindings& static_dims,
                   const std::map<ValueId, DType>& input_dtypes) {
  GBC_INTERNAL_ASSERT(region.kind == Segment::Kind::Region, "region_graph: not a region");
  const Graph& src = program.graph;
  Graph g;
  g.name = src.name + ".graph" + std::to_string(region.region);
  g.dims = src.dims;
  for (const auto& [name, value] : static_dims)
    if (g.dims.has(name)) g.dims.declare(name, {value, value});
  g.values = src.values;
  if (!static_dims.empty())
    for (ValueInfo& info : g.values) info.type.shape = substitute_dims(info.type.shape, static_dims);
  // ATen writes some params without moving their version counters (batch_norm's running stats),
  // so only params no node of the program writes are marked as such (param_steps.h relies on it).
  const AliasAnalysis aliases(src);
  std::vector<GraphInput> model_roles;  // as the model declares them: what inference checks
  for (ValueId v : region.inputs) {
    bool param = false;
    for (const GraphInput& in : src.inputs) param = param || (in.value == v && in.role == GraphInput::Role::Param);
    model_roles.push_back({v, param ? GraphInput::Role::Param : GraphInput::Role::Input});
    param = param && !aliases.may_be_mutated(v);
    g.inputs.push_back({v, param ? GraphInput::Role::Param : GraphInput::Role::Input});
  }
  g.body.nodes.reserve(region.nodes.size());
  for (size_t i : region.nodes) {
    g.body.nodes.push_back(src.body.nodes[i]);
    if (!static_dims.empty()) substitute_node(g.body.nodes.back(), static_dims);
  }
  g.outputs = region.outputs;
  if (!input_dtypes.empty()) {
    // Inference checks the model's rules (batch_norm's running stats must be params), so it sees
    // the model's roles; the region keeps its own.
    std::swap(g.inputs, model_roles);
    Diagnostics diags;
    GBC_INTERNAL_ASSERT(retype_graph(g, input_dtypes, diags),
                        "region_graph: the region does not accept its call's dtypes: " + diags.str());
    std::swap(g.inputs, model_roles);
  }
  return g;
}

}  // namespace gbc
