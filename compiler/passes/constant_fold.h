// constant_fold: evaluates elementwise ops on `full` constants; drops x*1, x/1, x+0, x-0 identities.
// Runs after decompose (decompositions and models leave constants and identities behind).
// Test: tests/passes/constant_fold_test.cpp.
#pragma once

#include "compiler/ir/graph.h"

namespace gbc {

/// Folding follows ATen's scalar semantics: torch.result_type promotion, integer wrap, float16 and
/// bfloat16 computed in float32 and rounded, transcendental functions from <cmath> in ATen's
/// formulas; exact operations (integer arithmetic, casts, half rounding) share the kernels' scalar
/// prelude. It declines where ATen raises or C++ is undefined (integer remainder by zero, negative
/// integer powers, non-finite or out-of-range float-to-int casts), where LibTorch versions disagree
/// (numbers not exactly representable in a float16/bfloat16 computation, sign of NaN), and where a
/// constant may be written by an in-place op. An identity is removed only when the result keeps
/// x's dtype and shape; when only the dtype differs (x float16 times a float32 tensor of ones), the
/// node becomes a cast, keeping ATen's promotion. IEEE signed zeros count: x + (-0.0) and x - 0.0
/// are identities for floats, x + 0.0 is not (-0.0 + 0.0 is +0.0).
Graph constant_fold(const Graph& graph);

}  // namespace gbc
