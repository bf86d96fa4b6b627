// Results that rounding at a threshold decides. A float value within rounding of a threshold the
// program puts on it (a whole number a cast to an integer truncates at, floor, ceil, round, sign, a
// comparison's number or other side, or the midpoint between two float16/bfloat16 values the
// program stores or casts it as) lands on either side in eager and in a compiled path: both are as right as float arithmetic
// allows, and the float64 reference's exact value may side with either, or with neither. The
// reference is run twice more with every such value moved down and up by its tolerance
// (compiler/passes/upcast_fp64.h, threshold_nudge): a compiled element that differs from eager's
// is rounding when it is one of the three references' (floats within the tolerance, NaN as NaN).
// output_judge.cpp overrules the tolerance, fp64 and nan_inf verdicts with it.
// Test: tests/oracles/threshold_rounding_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "oracles/tolerance.h"

namespace gbc {

/// The number of elements where eager and compiled differ (floats: outside `tol`, or in NaN/Inf),
/// when at each of them the compiled element is the reference's, `down`'s or `up`'s (in the
/// output's dtype; floats within `tol`); -1 when one is none of them, or the tensors cannot be
/// compared.
int64_t threshold_rounding_elements(const at::Tensor& eager, const at::Tensor& compiled, const at::Tensor& reference,
                                    const at::Tensor& down, const at::Tensor& up, const Tolerance& tol);

}  // namespace gbc
