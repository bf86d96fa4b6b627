// fold_conv_bn: an eval-mode batch_norm whose input is a conv2d used by nothing else folds into the
// conv's weight and bias (w * scale per output channel, b * scale + shift), as inference compilers
// fold it: the conv's epilogue is then what follows the batch_norm (relu, a residual add), with no
// per-channel operand, and the folded weight depends on params alone, so the runtime computes it
// once (param_steps.h). Runs before decompose (which would take the batch_norm apart).
// Test: tests/passes/fold_conv_bn_test.cpp.
#pragma once

#include "compiler/ir/graph.h"

namespace gbc {

/// conv2d(x, w[, b]) -> batch_norm(training=false) becomes one conv2d with the folded weight and
/// bias, where the conv's result has no other use, both are float32 or float64 of one dtype, and
/// no node between them has a side effect (the conv moves to the batch_norm's place).
Graph fold_conv_bn(const Graph& graph);

}  // namespace gbc
