#include "compiler/ir/retype.h"

#include "compiler/ir/infer.h"

namespace gbc {
namespace {

bool retype_block(Graph& graph, Block& block, Diagnostics& diags) {
  for (Node& node : block.nodes) {
    for (Block& inner : node.blocks)
      if (!retype_block(graph, inner, diags)) return false;
    if (!infer_node_types(graph, node, diags)) return false;
  }
  return true;
}

}  // namespace

bool retype_graph(Graph& graph, const std::map<ValueId, DType>& dtypes, Diagnostics& diags) {
  for (const auto& [value, dtype] : dtypes) graph.value(value).type.dtype = dtype;
  return retype_block(graph, graph.body, diags);
}

}  // namespace gbc
