#include "compiler/passes/graph_rewrite.h"

#include <functional>

#include "compiler/ir/infer.h"
#include "compiler/ir/printer.h"

namespace gbc {
namespace {

Node typed(Graph& graph, Node node) {
  Diagnostics diags;
  if (!infer_node_types(graph, node, diags))
    internal_error("a pass built an ill-typed node: " + print_node(graph, node) + "\n" + diags.str());
  return node;
}

}  // namespace

Node make_node(Graph& graph, OpId op, std::vector<Arg> args, Attrs attrs, const SourceLoc& loc,
               const std::string& name) {
  Node node;
  node.op = op;
  node.args = std::move(args);
  node.attrs = std::move(attrs);
  node.loc = loc;
  node.outputs.push_back(graph.add_value(graph.fresh_name(name), ValueType{}, loc));
  return typed(graph, std::move(node));
}

Node make_node_into(Graph& graph, ValueId out, OpId op, std::vector<Arg> args, Attrs attrs,
                    const SourceLoc& loc) {
  ValueType expected = graph.type(out);
  Node node;
  node.op = op;
  node.args = std::move(args);
  node.attrs = std::move(attrs);
  node.loc = loc;
  node.outputs.push_back(out);
  node = typed(graph, std::move(node));
  if (!same_type(graph, graph.type(out), expected))
    internal_error("a pass changed the type of '" + graph.name_of(out) + "' from " + expected.str() + " to " +
                   graph.type(out).str() + ": " + print_node(graph, node));
  graph.value(out).type = expected;
  return node;
}

void substitute_uses(Graph& graph, const std::map<ValueId, ValueId>& subst) {
  if (subst.empty()) return;
  auto resolve = [&](ValueId v) {
    for (auto it = subst.find(v); it != subst.end(); it = subst.find(v)) v = it->second;
    return v;
  };
  std::function<void(Block&)> visit = [&](Block& block) {
    for (auto& n : block.nodes) {
      for (auto& a : n.args)
        if (a.is_value()) a.value = resolve(a.value);
      for (auto& b : n.blocks) visit(b);
    }
    for (auto& r : block.results) r = resolve(r);
  };
  visit(graph.body);
  for (auto& o : graph.outputs) o = resolve(o);
}

PromotionOperand promotion_operand(const Graph& graph, const Arg& arg) {
  if (!arg.is_value()) return {PromotionOperand::Rank::Number, scalar_kind_default_dtype(arg.scalar.kind)};
  const ValueType& t = graph.type(arg.value);
  if (t.is_scalar()) return {PromotionOperand::Rank::Number, scalar_kind_default_dtype(t.scalar_kind)};
  return {t.rank() ? PromotionOperand::Rank::Dimensioned : PromotionOperand::Rank::ZeroDim, t.dtype};
}

bool same_type(const Graph& graph, const ValueType& a, const ValueType& b) {
  if (a.kind != b.kind) return false;
  if (a.is_scalar()) return a.scalar_kind == b.scalar_kind;
  if (!a.is_tensor()) return true;
  if (a.dtype != b.dtype || a.rank() != b.rank()) return false;
  for (size_t i = 0; i < a.rank(); ++i)
    if (!a.shape[i].same_as(b.shape[i]) && graph.dims.equal(a.shape[i], b.shape[i]) != Truth::Always) return false;
  return true;
}

}  // namespace gbc
