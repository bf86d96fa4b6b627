// functionalize: turns add_/mul_ into add/mul where nobody can observe the mutation.
// Runs first (on the graph as loaded); in-place ops on graph inputs stay (the runtime breaks there).
// Test: tests/passes/functionalize_test.cpp.
#pragma once

#include "compiler/ir/graph.h"

namespace gbc {

/// An in-place node becomes the out-of-place op (plus a cast back when ATen's promotion would widen
/// self's dtype) when self shares no storage with a graph input and no value that sees the write,
/// other than the node's own result, is read afterwards.
Graph functionalize(const Graph& graph);

}  // namespace gbc
