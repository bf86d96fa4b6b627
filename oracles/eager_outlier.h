// Discrete differences that are eager's own error. Where eager and a compiled path differ in an
// integer or bool element, or in where NaN and Inf appear, rounding can still be the cause: eager's
// float32 arithmetic lands on the other side of a threshold (round, a comparison, a cast to an
// integer) or overflows where the exact result does not. The float64 reference decides, as it does for float rounding
// (fp64_oracle.h): the difference is eager's when at every element where eager and the compiled
// result differ that way, the compiled result is the reference's (in the output's dtype; floats
// within the tolerance) and eager's is not, or eager overflowed (NaN or Inf where the float64
// reference, rounded to the output's dtype, is finite, e.g. layer_norm's one-pass moments of values
// near the float32 maximum: eager has no usable value there; a reference beyond the dtype's largest
// finite value makes Inf the correctly rounded answer), and every other element passes the tolerance or the fp64
// oracle. A wrong kernel differs where eager is right, and is never excused; a NaN or Inf the
// inputs carry is in the reference too, so dropping one is never excused either. output_judge.cpp
// overrules the nan_inf and tolerance verdicts with it. Test: tests/oracles/eager_outlier_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "oracles/fp64_oracle.h"
#include "oracles/tolerance_oracle.h"

namespace gbc {

struct EagerOutlier {
  bool eager_is_outlier = false;
  int64_t elements = 0;  // the discrete differences the reference settles (when eager_is_outlier)
};

/// `spec` is the tolerance for float elements: how close the compiled result must be to the
/// reference where eager's NaN/Inf differs, and to eager everywhere else (where the fp64 oracle
/// with `fp64_spec` may also pass them, as for any float output).
EagerOutlier find_eager_outlier(const at::Tensor& eager, const at::Tensor& compiled, const at::Tensor& fp64_ref,
                                const ToleranceSpec& spec, const Fp64Spec& fp64_spec);

/// A data-dependent shape (nonzero, masked_select of a mask that rounding decided) differs: eager's
/// own error when the compiled result is the reference's, in shape and in every element (floats
/// within `spec`), and eager's shape is not the reference's.
bool eager_shape_is_outlier(const at::Tensor& eager, const at::Tensor& compiled, const at::Tensor& fp64_ref,
                            const ToleranceSpec& spec);

}  // namespace gbc
