// The tolerance oracle: torch.testing.assert_close's check with per-dtype or per-output rtol/atol
// and equal_nan, or, with an aggregate error statistic (max, mean, quantile), Polygraphy's rule: the
// output fails when the statistic of the absolute errors exceeds atol AND that of the relative
// errors exceeds rtol. Test: tests/oracles/tolerance_oracle_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include "oracles/tolerance.h"
#include "oracles/error_stat.h"
#include "oracles/verdict.h"

namespace gbc {

struct ToleranceSpec {
  Tolerance tol;
  bool equal_nan = true;
  ErrorStat stat;
};

Verdict tolerance_oracle(const at::Tensor& expected, const at::Tensor& actual, const ToleranceSpec& spec);

/// "rtol 1.3e-06 atol 1e-05".
std::string tolerance_str(const Tolerance& tol);

}  // namespace gbc
