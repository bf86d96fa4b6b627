#include "compiler/runtime/rewrite_if.h"

#include <set>

#include "compiler/ir/op_schema.h"
#include "compiler/passes/graph_rewrite.h"

namespace gbc {
namespace {

// Why running `node` when its branch is not taken would change what the program does ("" when it
// would not).
std::string impurity(const Node& node) {
  const OpSchema* schema = find_op_schema(node.op);
  GBC_INTERNAL_ASSERT(schema != nullptr, "rewrite_if: no schema for op '" + op_name(node.op) + "'");
  switch (schema->cls) {
    case OpClass::Effect: return "print";
    case OpClass::HostScalar: return "item";
    case OpClass::DataDependent: return "nonzero";
    case OpClass::InPlace: return "the in-place op " + op_name(node.op);
    case OpClass::Control: return "an if that cannot be rewritten";
    case OpClass::Random: return node.attr_bool("training", true) ? "dropout, which draws random numbers" : "";
    case OpClass::Normalization:
      return node.op == OpId::BatchNorm && node.attr_bool("training", false) ? "batch_norm updating its running stats" : "";
    case OpClass::Custom:
      return node.attr_string("meta", "none") == "same_as_input" ? "" : "a custom kernel without meta";
    default: return "";
  }
}

class IfRewriter {
 public:
  explicit IfRewriter(const Graph& graph) : result_{graph, {}, {}} {
    for_each_node(graph.body, [&](const Node& n) {
      const OpSchema* s = find_op_schema(n.op);
      if (s && s->cls == OpClass::InPlace && !n.args.empty() && n.args[0].is_value())
        mutated_in_place_.insert(n.args[0].value);
    });
  }

  IfRewriteResult run() {
    Block body = std::move(result_.graph.body);
    rewrite_block(body);
    result_.graph.body = std::move(body);
    return std::move(result_);
  }

 private:
  void rewrite_block(Block& block) {
    std::vector<Node> out;
    out.reserve(block.nodes.size());
    for (Node& node : block.nodes) {
      if (node.op != OpId::If) {
        out.push_back(std::move(node));
        continue;
      }
      for (Block& b : node.blocks) rewrite_block(b);
      std::string why = refusal(node);
      if (!why.empty()) {
        result_.refusals[node.output()] = why;
        out.push_back(std::move(node));
        continue;
      }
      lower_to_where(node, out);
      result_.rewritten.push_back(node.loc);
    }
    block.nodes = std::move(out);
  }

  std::string refusal(const Node& node) const {
    const Graph& g = result_.graph;
    if (node.output() == kNoValue || !g.type(node.output()).is_tensor()) return "its result is not a tensor";
    if (mutated_in_place_.count(node.output()))
      return "its result '" + g.name_of(node.output()) + "' is later mutated in place";
    static const char* kBranch[] = {"then", "else"};
    for (size_t b = 0; b < node.blocks.size(); ++b) {
      for (const Node& n : node.blocks[b].nodes) {
        std::string why = impurity(n);
        if (!why.empty()) return std::string("the ") + kBranch[b] + " branch has " + why + " (" + n.loc.str() + ")";
      }
    }
    return "";
  }

  // Appends the nodes computing the if as where(cond, then, else): cond first, then both branches.
  void lower_to_where(Node& node, std::vector<Node>& out) {
    Graph& g = result_.graph;
    const SourceLoc& loc = node.loc;
    const std::string base = g.name_of(node.output()) + ".cond";
    const Arg& pred = node.args.at(0);
    ValueId cond = kNoValue;
    if (!pred.is_value()) {
      // bool(number), as Python's `if` reads a constant: non-zero (NaN included) is true.
      out.push_back(make_node(g, OpId::Full, {}, {{"shape", SymShape{}}, {"value", pred.scalar}, {"dtype", DType::Bool}},
                              loc, base));
      cond = out.back().output();
    } else if (g.type(pred.value).is_scalar()) {
      // A host number becomes a 0-d tensor first: 0.0 (float64) + s keeps every non-zero non-zero.
      out.push_back(make_node(g, OpId::Full, {},
                              {{"shape", SymShape{}}, {"value", Scalar::from_float(0.0)}, {"dtype", DType::Float64}},
                              loc, base));
      out.push_back(make_node(g, OpId::Add, {Arg::of(out.back().output()), pred}, {}, loc, base));
      out.push_back(make_node(g, OpId::Ne, {Arg::of(out.back().output()), Arg::number(Scalar::from_int(0))}, {}, loc, base));
      cond = out.back().output();
    } else {
      // Tensor.__bool__: the single element is non-zero. A 0-d bool selects as it is.
      cond = pred.value;
      if (g.type(cond).rank() != 0) {
        out.push_back(make_node(g, OpId::Reshape, {Arg::of(cond)}, {{"shape", SymShape{}}}, loc, base));
        cond = out.back().output();
      }
      if (g.type(cond).dtype != DType::Bool) {
        out.push_back(make_node(g, OpId::Ne, {Arg::of(cond), Arg::number(Scalar::from_int(0))}, {}, loc, base));
        cond = out.back().output();
      }
    }
    GBC_INTERNAL_ASSERT(node.blocks.size() == 2 && node.blocks[0].results.size() == 1 &&
                            node.blocks[1].results.size() == 1,
                        "rewrite_if: malformed if node");
    ValueId then_result = node.blocks[0].results[0];
    ValueId else_result = node.blocks[1].results[0];
    for (Block& b : node.blocks)
      for (Node& n : b.nodes) out.push_back(std::move(n));
    out.push_back(make_node_into(g, node.output(), OpId::Where, {Arg::of(cond), Arg::of(then_result), Arg::of(else_result)},
                                 {}, loc));
  }

  IfRewriteResult result_;
  std::set<ValueId> mutated_in_place_;
};

}  // namespace

IfRewriteResult rewrite_pure_ifs(const Graph& graph) { return IfRewriter(graph).run(); }

}  // namespace gbc
