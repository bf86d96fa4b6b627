// Integer results of a cast that rounding decides. A float value within rounding of a whole
// number (or of the midpoint between two float16/bfloat16 values, which the program stores
// rounded) truncates to either neighbour, and eager and a compiled path may each take one: both
// are as right as float arithmetic allows, and neither is the float64 reference's own truncation
// of the exact value in every case. The reference is run twice more with every float-to-integer
// cast's input moved down and up by its tolerance (compiler/passes/upcast_fp64.h, cast_nudge):
// a compiled integer (or bool) element that differs from eager's is rounding when it is the
// result of one of the three references. output_judge.cpp overrules the tolerance verdict with it.
// Test: tests/oracles/cast_rounding_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace gbc {

/// The number of elements where eager and compiled differ, when at each of them the compiled
/// element is the reference's, `down`'s or `up`'s (all of eager's shape and dtype); -1 when one
/// is none of them, or the tensors cannot be compared.
int64_t cast_rounding_elements(const at::Tensor& eager, const at::Tensor& compiled, const at::Tensor& reference,
                               const at::Tensor& down, const at::Tensor& up);

}  // namespace gbc
