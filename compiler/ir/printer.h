// A readable text form of the graph IR, used by `--log passes`, `gbcheck explain` and tests:
//
//   graph mlp(x: float32[B, 64], param w: float32[64, 32]) {
//     h: float32[B, 32] = matmul(x, w)                     # mlp.yaml:9:5
//     y: float32[B, 32] = softmax(h, dim=-1)               # mlp.yaml:11:5
//     return y
//   }
#pragma once

#include <string>

#include "compiler/ir/graph.h"

namespace gbc {

struct PrintOptions {
  bool locations = true;  // append "# file:line:col"
};

std::string print_graph(const Graph& graph, const PrintOptions& options = {});
/// One node as a line without indentation or location ("h: float32[B, 32] = matmul(x, w)").
std::string print_node(const Graph& graph, const Node& node);

}  // namespace gbc
