// cse: a pure node identical to an earlier one (op, args, attributes) goes; its uses read the earlier.
// Runs after decompose and constant_fold (decompositions repeat casts, folding repeats constants).
// Test: tests/passes/cse_test.cpp.
#pragma once

#include "compiler/ir/graph.h"

namespace gbc {

/// Never merged: nodes with side effects (print, in-place, dropout, custom, batch_norm training),
/// item (a host sync), nonzero (a data-dependent size of its own), `if`, and nodes reading or
/// producing storage that some node writes to. A node in an `if` branch may reuse a value from an
/// enclosing block, never one from a sibling branch. Numbers compare bit for bit (0.0 is not -0.0).
Graph cse(const Graph& graph);

}  // namespace gbc
