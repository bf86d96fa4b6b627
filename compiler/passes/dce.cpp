#include "compiler/passes/dce.h"

#include <set>

#include "compiler/passes/effects.h"

namespace gbc {
namespace {

bool has_effect_inside(const Node& n) {
  if (has_side_effect(n)) return true;
  for (const auto& b : n.blocks)
    for (const auto& inner : b.nodes)
      if (has_effect_inside(inner)) return true;
  return false;
}

// One backward sweep is exact: the IR is SSA without loops, so every use follows its definition.
void sweep(Block& block, std::set<ValueId>& used) {
  used.insert(block.results.begin(), block.results.end());
  std::vector<Node> kept;
  for (auto it = block.nodes.rbegin(); it != block.nodes.rend(); ++it) {
    Node& n = *it;
    bool live = has_effect_inside(n);
    for (ValueId o : n.outputs) live = live || used.count(o) != 0;
    if (!live) continue;
    for (auto& b : n.blocks) sweep(b, used);
    for (const auto& a : n.args)
      if (a.is_value()) used.insert(a.value);
    kept.push_back(std::move(n));
  }
  block.nodes.assign(std::make_move_iterator(kept.rbegin()), std::make_move_iterator(kept.rend()));
}

}  // namespace

Graph dce(const Graph& graph) {
  Graph g = graph;
  std::set<ValueId> used(g.outputs.begin(), g.outputs.end());
  sweep(g.body, used);
  return g;
}

}  // namespace gbc
