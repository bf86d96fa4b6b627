#include "compiler/passes/functionalize.h"

#include <functional>
#include <set>

#include "compiler/ir/op_schema.h"
#include "compiler/passes/effects.h"
#include "compiler/passes/graph_rewrite.h"

namespace gbc {
namespace {

// copy_ stays: its out-of-place form would be a cast and an expand of src, and a copy_ into a
// value nobody else sees is rare (decompose writes batch_norm's running stats with it, into
// params, which are never private).
bool is_in_place(const Node& node) { return is_in_place_op(node.op) && node.op != OpId::CopyInPlace; }

// Where each read happens, in program order (a block's results are read at the block's end;
// graph outputs after everything).
struct Read {
  ValueId value;
  size_t position;
};

struct ProgramOrder {
  std::map<const Node*, size_t> position;
  std::vector<Read> reads;
  std::map<ValueId, const Node*> producer;
};

ProgramOrder program_order(const Graph& graph) {
  ProgramOrder order;
  size_t clock = 0;
  std::function<void(const Block&)> visit = [&](const Block& block) {
    for (const auto& n : block.nodes) {
      size_t here = clock++;
      order.position[&n] = here;
      for (const auto& a : n.args)
        if (a.is_value()) order.reads.push_back({a.value, here});
      for (const auto& b : n.blocks) visit(b);
      for (ValueId o : n.outputs) order.producer[o] = &n;
    }
    for (ValueId r : block.results) order.reads.push_back({r, clock++});
  };
  visit(graph.body);
  for (ValueId o : graph.outputs) order.reads.push_back({o, clock});
  return order;
}

// Whether the in-place node's write is visible only through its own result.
bool write_is_private(const Graph& graph, const Node& node, const AliasAnalysis& aa, const ProgramOrder& order) {
  if (node.args.size() != 2 || !node.args[0].is_value() || node.outputs.size() != 1) return false;
  ValueId self = node.args[0].value;
  ValueId result = node.outputs[0];
  if (aa.may_alias_graph_input(self)) return false;
  // Overlapping operands make ATen's in-place result depend on the traversal order.
  if (node.args[1].is_value() && graph.type(node.args[1].value).is_tensor() && aa.may_alias(self, node.args[1].value))
    return false;
  // Whether v may see self's storage other than through the node's result (a view of self taken
  // before the write, self itself, or a branch result that may be either).
  const std::set<ValueId>& self_roots = aa.roots(self);
  std::map<ValueId, bool> memo;
  std::function<bool(ValueId)> sees_self_directly = [&](ValueId v) {
    if (v == result) return false;
    if (auto it = memo.find(v); it != memo.end()) return it->second;
    bool sees = false;
    auto p = order.producer.find(v);
    std::vector<ValueId> sources;
    if (p != order.producer.end()) sources = alias_sources(graph, *p->second);
    if (sources.empty()) {
      sees = self_roots.count(v) != 0;
    } else {
      for (ValueId s : sources) sees = sees || sees_self_directly(s);
    }
    return memo[v] = sees;
  };
  size_t at = order.position.at(&node);
  for (const Read& r : order.reads) {
    if (r.position <= at || !graph.type(r.value).is_tensor()) continue;
    if (sees_self_directly(r.value)) return false;
  }
  return true;
}

OpId out_of_place_op(OpId in_place) {
  switch (in_place) {
    case OpId::AddInPlace: return OpId::Add;
    case OpId::MulInPlace: return OpId::Mul;
    default: internal_error("functionalize: '" + op_name(in_place) + "' has no out-of-place op");
  }
}

// Replaces the in-place node with its out-of-place op; its result keeps its id and type.
std::vector<Node> out_of_place(Graph& graph, const Node& node) {
  const OpId op = out_of_place_op(node.op);
  ValueId out = node.outputs[0];
  DType self_dtype = graph.type(node.args[0].value).dtype;
  DType promoted = result_type({promotion_operand(graph, node.args[0]), promotion_operand(graph, node.args[1])});
  if (promoted == self_dtype) return {make_node_into(graph, out, op, node.args, node.attrs, node.loc)};
  // ATen computes in the promoted dtype and stores the result into self's.
  Node wide = make_node(graph, op, node.args, node.attrs, node.loc,
                        graph.name_of(out) + "." + std::string(dtype_name(promoted)));
  Node cast = make_node_into(graph, out, OpId::To, {Arg::of(wide.output())}, {{"dtype", self_dtype}}, node.loc);
  return {std::move(wide), std::move(cast)};
}

// Rewrites the first in-place node (program order) whose write is private; false when none is.
bool rewrite_one(Graph& graph) {
  AliasAnalysis aa(graph);
  ProgramOrder order = program_order(graph);
  std::function<bool(Block&)> visit = [&](Block& block) {
    for (size_t i = 0; i < block.nodes.size(); ++i) {
      Node& n = block.nodes[i];
      for (auto& b : n.blocks)
        if (visit(b)) return true;
      if (!is_in_place(n) || !write_is_private(graph, n, aa, order)) continue;
      std::vector<Node> replacement = out_of_place(graph, n);
      block.nodes.erase(block.nodes.begin() + static_cast<long>(i));
      block.nodes.insert(block.nodes.begin() + static_cast<long>(i), replacement.begin(), replacement.end());
      return true;
    }
    return false;
  };
  return visit(graph.body);
}

}  // namespace

Graph functionalize(const Graph& graph) {
  Graph g = graph;
  // One at a time: each rewrite changes what aliases what for the next.
  while (rewrite_one(g)) {
  }
  return g;
}

}  // namespace gbc
