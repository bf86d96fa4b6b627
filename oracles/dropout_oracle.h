// The dropout oracle. In training mode dropout zeroes each element with probability p and scales
// the rest by 1/(1-p); a compiled path with its own random stream cannot match eager bit for bit,
// so its result is checked statistically against eager's dropout input x: every element must be 0
// or x/(1-p) within the tolerance, and the kept fraction must be 1-p within kDropoutSigmas binomial
// standard deviations (a false alarm about once in 1.7 million checks). Elements where x/(1-p) is
// itself within the tolerance of 0 say nothing about the mask and are not counted.
// Where eager's x carries its own rounding (a bfloat16 step eager rounds twice), the kept values
// may differ from x/(1-p) beyond the tolerance while matching the float64 recomputation better:
// given the float64 reference's x, the kept elements are then judged by the fp64 oracle's rule,
// and where eager's x overflowed (NaN/Inf, the reference's finite) must be the reference's.
// In eval mode dropout is the identity and the result must equal x bit for bit.
// Test: tests/oracles/stateful_oracles_test.cpp, tests/runner/check_runner_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include "oracles/fp64_oracle.h"
#include "oracles/tolerance.h"
#include "oracles/verdict.h"

namespace gbc {

constexpr double kDropoutSigmas = 5.0;

struct DropoutSpec {
  double p = 0.5;
  bool training = true;
  Tolerance tol;
  /// The float64 reference's value of the dropout's argument (undefined: none), and the fp64
  /// oracle's settings for judging the kept values against it.
  at::Tensor input_fp64;
  Fp64Spec fp64;
};

/// `input` is eager's value of the dropout's argument; `actual` the compiled path's dropout result.
Verdict dropout_oracle(const at::Tensor& input, const at::Tensor& actual, const DropoutSpec& spec);

}  // namespace gbc
