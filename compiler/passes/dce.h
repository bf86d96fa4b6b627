// dce: dead code elimination; removes nodes whose outputs nothing uses, inside `if` branches too.
// Runs last in the pipeline (after cse and constant_fold leave dead nodes behind).
// Test: tests/passes/dce_test.cpp.
#pragma once

#include "compiler/ir/graph.h"

namespace gbc {

/// Kept whatever their uses: graph outputs and their producers, nodes with side effects (print,
/// in-place ops, batch_norm in training, dropout, custom) and every `if` whose branches hold one.
/// Graph inputs and params stay even when unused (they are the graph's signature).
Graph dce(const Graph& graph);

}  // namespace gbc
