// Structural checks of a graph: every use is defined before, ids are in range, every value is
// defined once, outputs exist and types are known. Run after every pass in debug builds and by
// tests; a failure is gbcheck's bug (InternalError), never the user's.
#pragma once

#include "compiler/ir/graph.h"

namespace gbc {

/// Throws InternalError naming the first problem.
void verify_graph(const Graph& graph, const std::string& after_pass = "");

}  // namespace gbc
