#include "compiler/passes/fold_conv_bn.h"

#include <map>

#include "compiler/passes/effects.h"
#include "compiler/passes/graph_rewrite.h"

namespace gbc {
namespace {

void count_uses(const Block& block, std::map<ValueId, int>& uses) {
  for (const Node& n : block.nodes) {
    for (const Arg& a : n.args)
      if (a.is_value()) ++uses[a.value];
    for (const Block& b : n.blocks) count_uses(b, uses);
  }
  for (ValueId v : block.results) ++uses[v];
}

class ConvBnFolder {
 public:
  explicit ConvBnFolder(Graph& graph) : g_(graph) {
    for (ValueId v : g_.outputs) ++uses_[v];
    count_uses(g_.body, uses_);
  }

  void rewrite(Block& block) {
    for (Node& n : block.nodes)
      for (Block& b : n.blocks) rewrite(b);
    std::map<ValueId, size_t> conv_at;  // conv output -> its index in block.nodes
    std::vector<bool> drop(block.nodes.size(), false);
    std::vector<std::vector<Node>> replacement(block.nodes.size());
    for (size_t i = 0; i < block.nodes.size(); ++i) {
      const Node& n = block.nodes[i];
      if (n.op == OpId::Conv2d && n.outputs.size() == 1) conv_at[n.output()] = i;
      if (n.op != OpId::BatchNorm || n.args.size() != 5 || !n.args[0].is_value()) continue;
      auto c = conv_at.find(n.args[0].value);
      if (c == conv_at.end() || !foldable(block, c->second, i)) continue;
      replacement[i] = folded(block.nodes[c->second], n);
      drop[c->second] = true;
    }
    std::vector<Node> out;
    for (size_t i = 0; i < block.nodes.size(); ++i) {
      if (drop[i]) continue;
      if (replacement[i].empty()) {
        out.push_back(std::move(block.nodes[i]));
      } else {
        for (Node& r : replacement[i]) out.push_back(std::move(r));
      }
    }
    block.nodes = std::move(out);
  }

 private:
  bool foldable(const Block& block, size_t conv, size_t bn) const {
    const Node& c = block.nodes[conv];
    const Node& b = block.nodes[bn];
    if (b.attr_bool("training", false) || uses_.at(c.output()) != 1) return false;
    const DType dtype = g_.type(c.output()).dtype;
    if (dtype != DType::Float32 && dtype != DType::Float64) return false;
    if (c.args.size() < 2 || c.args.size() > 3 || g_.type(c.output()).shape.size() != 4) return false;
    for (const Arg& a : c.args)
      if (!a.is_value() || g_.type(a.value).dtype != dtype) return false;
    for (const Arg& a : b.args)
      if (!a.is_value() || g_.type(a.value).dtype != dtype) return false;
    for (size_t k = 1; k < 5; ++k)
      if (g_.type(b.args[k].value).shape.size() != 1) return false;
    for (size_t k = conv + 1; k < bn; ++k)
      if (has_side_effect(block.nodes[k])) return false;
    return true;
  }

  // As ATen's eval batch_norm computes its per-channel terms (and decompose's batch_norm):
  // scale = rsqrt(var + eps) * weight, shift = bias - mean * scale.
  std::vector<Node> folded(const Node& conv, const Node& bn) {
    std::vector<Node> out;
    const std::string base = g_.name_of(bn.output());
    auto emit = [&](OpId op, std::vector<Arg> args, Attrs attrs, const std::string& suffix) {
      out.push_back(make_node(g_, op, std::move(args), std::move(attrs), bn.loc, base + "." + suffix));
      return out.back().output();
    };
    const ValueId gamma = bn.args[1].value, beta = bn.args[2].value, mean = bn.args[3].value, var = bn.args[4].value;
    ValueId ve = emit(OpId::Add, {Arg::of(var), Arg::number(Scalar::from_float(bn.attr_float("eps", 1e-5)))}, {}, "var_eps");
    ValueId scale = emit(OpId::Mul, {Arg::of(emit(OpId::Rsqrt, {Arg::of(ve)}, {}, "rstd")), Arg::of(gamma)}, {}, "scale");
    ValueId shift = emit(OpId::Sub, {Arg::of(beta), Arg::of(emit(OpId::Mul, {Arg::of(mean), Arg::of(scale)}, {}, "mean_scaled"))}, {}, "shift");
    const SymShape& ws = g_.type(conv.args[1].value).shape;
    SymShape per_out_channel(ws.size(), DimExpr(1));
    per_out_channel[0] = ws[0];
    ValueId scale_w = emit(OpId::Reshape, {Arg::of(scale)}, {{"shape", per_out_channel}}, "scale_w");
    ValueId weight = emit(OpId::Mul, {conv.args[1], Arg::of(scale_w)}, {}, "folded_weight");
    ValueId bias = shift;
    if (conv.args.size() == 3)
      bias = emit(OpId::Add, {Arg::of(emit(OpId::Mul, {conv.args[2], Arg::of(scale)}, {}, "bias_scaled")), Arg::of(shift)}, {}, "folded_bias");
    out.push_back(make_node_into(g_, bn.output(), OpId::Conv2d, {conv.args[0], Arg::of(weight), Arg::of(bias)}, conv.attrs, conv.loc));
    return out;
  }

  Graph& g_;
  std::map<ValueId, int> uses_;
};

}  // namespace

Graph fold_conv_bn(const Graph& graph) {
  Graph g = graph;
  ConvBnFolder(g).rewrite(g.body);
  return g;
}

}  // namespace gbc
