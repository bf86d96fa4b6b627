// The fp64 oracle, after torch._dynamo's same(ref, res, fp64_ref): the eager result and the
// compiled result are both measured against a float64 recomputation of eager from the same inputs,
// and the compiled result passes when its error is at most `multiplier` times eager's own error
// plus atol. A fused kernel that reorders a float32 sum has an error of the same order as eager's
// (both are rounding) and passes; a wrong kernel's error is far larger and fails.
//
// The error is the root mean square of the per-element errors with error_stat elementwise (as in
// dynamo), else the chosen statistic (max, mean, quantile). Elements where eager and compiled agree
// on a NaN or Inf are left out; where only one of them is non-finite the error is infinite.
// Test: tests/oracles/fp64_oracle_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include "oracles/error_stat.h"
#include "oracles/verdict.h"

namespace gbc {

struct Fp64Spec {
  double multiplier = 2.0;
  double atol = 0.0;
  ErrorStat stat;
};

struct Fp64Errors {
  double eager = 0.0;     // eager's error against float64
  double compiled = 0.0;  // the compiled result's
};

/// Both errors against the float64 reference (same shapes: the caller checked).
Fp64Errors fp64_errors(const at::Tensor& eager, const at::Tensor& compiled, const at::Tensor& fp64, const ErrorStat& stat);

Verdict fp64_oracle(const at::Tensor& eager, const at::Tensor& compiled, const at::Tensor& fp64, const Fp64Spec& spec);

}  // namespace gbc
