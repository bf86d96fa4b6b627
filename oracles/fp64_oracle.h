// The fp64 oracle, after torch._dynamo's same(ref, res, fp64_ref): the eager result and the
// compiled result are both measured against a float64 recomputation of eager from the same inputs,
// and the compiled result passes when its error is at most `multiplier` times eager's own error
// plus atol. A fused kernel that reorders a float32 sum has an error of the same order as eager's
// (both are rounding) and passes; a wrong kernel's error is far larger and fails.
//
// Eager's error is a sample, and a small one for a small output: a float32 sum of 2^20 normal
// values has an RMS rounding error near 1.4e-4 whichever order it adds in, yet a single sum can land
// within 1e-5 of the truth by luck, and the ratio of two such errors has a Cauchy-like tail. So the
// rule is a one-sided F-test rather than a bare ratio: with k elements compared (those where either
// error is nonzero) the compiled result fails when
//     error(compiled) > multiplier * rms_ratio_quantile(k, kFp64FalseAlarm) * error(eager) + atol,
// i.e. when it is worse than `multiplier` times eager's accuracy with confidence 1 - kFp64FalseAlarm
// (error_ratio.h). The widening is x637 for a scalar, x3.5 for 8 elements, x1.1 for 1000 and
// vanishes for large outputs, where the rule is dynamo's. A kernel that drops or duplicates a term
// is off by the term itself, orders of magnitude beyond rounding at any size, and still fails.
//
// The error is the root mean square of the per-element errors with error_stat elementwise (as in
// dynamo), else the chosen statistic (max, mean, quantile; the same widening, which is exact for the
// RMS and a close approximation for the others). Elements where eager and compiled agree on a NaN
// or Inf are left out; where only one of them is non-finite the error is infinite.
// Test: tests/oracles/fp64_oracle_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "oracles/error_stat.h"
#include "oracles/verdict.h"

namespace gbc {

/// The chance that a compiled result exactly `multiplier` times less accurate than eager fails
/// the oracle (per output and case); a rounding-equivalent result fails far less often.
constexpr double kFp64FalseAlarm = 1e-3;

struct Fp64Spec {
  double multiplier = 2.0;
  double atol = 0.0;
  ErrorStat stat;
};

struct Fp64Errors {
  double eager = 0.0;     // eager's error against float64
  double compiled = 0.0;  // the compiled result's
  int64_t samples = 0;    // elements where either error is nonzero (the F-test's degrees of freedom)
};

/// Both errors against the float64 reference (same shapes: the caller checked).
Fp64Errors fp64_errors(const at::Tensor& eager, const at::Tensor& compiled, const at::Tensor& fp64, const ErrorStat& stat);

Verdict fp64_oracle(const at::Tensor& eager, const at::Tensor& compiled, const at::Tensor& fp64, const Fp64Spec& spec);

}  // namespace gbc
