// decompose: composite ops (softmax, layer_norm, var, gelu, ...) become primitives the partitioner fuses.
// Runs after functionalize; the partitioner (partition.h) runs on its output.
// Test: tests/passes/decompose_test.cpp; numerics against ATen: pipeline_semantics_test.cpp.
#pragma once

#include "compiler/ir/graph.h"

namespace gbc {

/// Decomposed: softmax, log_softmax, logsumexp, layer_norm, var, mean, gelu, silu, batch_norm in
/// eval mode, linear with bias. Each follows the algorithm of ATen's CPU kernel (logsumexp's masking
/// of infinite maxima included), so results match ATen within rounding. With float16/bfloat16
/// inputs every decomposition but linear's computes in float32 and casts back once at the end, as
/// ATen's kernels do internally. A composite stays whole where primitives cannot express it
/// exactly: mean and var over dims of symbolic size (the divisor is no constant), softmax,
/// log_softmax and logsumexp over a dim that may be empty (amax has no identity), layer_norm with
/// an empty normalized_shape, batch_norm in training mode.
Graph decompose(const Graph& graph);

}  // namespace gbc
