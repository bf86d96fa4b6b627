#include "compiler/passes/cse.h"

#include <cmath>
#include <cstring>
#include <map>
#include <string>

#include "compiler/passes/effects.h"
#include "compiler/passes/graph_rewrite.h"

namespace gbc {
namespace {

std::string scalar_key(const Scalar& s) {
  if (s.kind != ScalarKind::Float) return s.str();
  if (std::isnan(s.f)) return "nan";
  uint64_t bits = 0;
  std::memcpy(&bits, &s.f, sizeof bits);
  return "f" + std::to_string(bits);
}

bool mergeable(const Graph& g, const Node& n, const AliasAnalysis& aa) {
  if (n.outputs.size() != 1 || !n.blocks.empty() || has_side_effect(n)) return false;
  if (n.op == OpId::Item || n.op == OpId::Nonzero) return false;
  // Two computations of a value that is later written to are two different tensors.
  if (aa.may_be_mutated(n.output())) return false;
  for (const auto& a : n.args)
    if (a.is_value() && g.type(a.value).is_tensor() && aa.may_be_mutated(a.value)) return false;
  return true;
}

// Op, args and attributes, spelled so that equal keys mean identical nodes.
std::string node_key(const Node& n) {
  std::string key = op_name(n.op) + "(";
  for (const auto& a : n.args) key += (a.is_value() ? "%" + std::to_string(a.value) : "#" + scalar_key(a.scalar)) + ",";
  key += ")";
  for (const auto& [name, value] : n.attrs) {
    key += name + "=" + std::to_string(value.index()) + ":";
    key += std::holds_alternative<Scalar>(value) ? scalar_key(std::get<Scalar>(value))
           : std::holds_alternative<double>(value) ? scalar_key(Scalar::from_float(std::get<double>(value)))
                                                   : attr_str(value);
    key += ";";
  }
  return key;
}

class Eliminator {
 public:
  explicit Eliminator(Graph& graph) : g_(graph), aa_(graph), returned_(aa_) {}

  void run() {
    visit(g_.body, {});
    substitute_uses(g_, subst_);
  }

 private:
  // `available`: the values computed in enclosing blocks before this one, by key.
  void visit(Block& block, std::map<std::string, ValueId> available) {
    std::vector<Node> out;
    out.reserve(block.nodes.size());
    for (auto& n : block.nodes) {
      for (auto& a : n.args)
        if (a.is_value()) a.value = resolve(a.value);
      for (auto& b : n.blocks) visit(b, available);
      if (mergeable(g_, n, aa_)) {
        std::string key = node_key(n);
        auto it = available.find(key);
        // Two outputs merged into one tensor: a write to one after the graph returns (a graph
        // break's in-place op) would show in the other, where eager has two tensors.
        const bool both_returned =
            it != available.end() && returned_.returned(n.output()) && returned_.returned(it->second);
        if (it != available.end() && !both_returned) {
          returned_.substitute(n.output(), it->second);
          subst_[n.output()] = it->second;
          continue;
        }
        available.emplace(std::move(key), n.output());
      }
      out.push_back(std::move(n));
    }
    block.nodes = std::move(out);
  }

  ValueId resolve(ValueId v) const {
    for (auto it = subst_.find(v); it != subst_.end(); it = subst_.find(v)) v = it->second;
    return v;
  }

  Graph& g_;
  AliasAnalysis aa_;
  std::map<ValueId, ValueId> subst_;
  ReturnedStorage returned_;
};

}  // namespace

Graph cse(const Graph& graph) {
  Graph g = graph;
  Eliminator(g).run();
  return g;
}

}  // namespace gbc
