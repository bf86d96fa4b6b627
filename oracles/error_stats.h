// Elementwise comparison of a compiled result with a reference, with the statistics every oracle
// reports: max/mean absolute and relative error, ULP distance, mismatched count, the worst element
// with both values, and the smallest tolerance that would have passed.
//
// Closeness is torch.isclose's: |actual - expected| <= atol + rtol * |expected|, equal infinities
// are close, and NaN is close to NaN only with equal_nan. Test: tests/oracles/error_stats_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/aten/tensor_fwd.h"
#include "oracles/error_stat.h"
#include "oracles/tolerance.h"

namespace gbc {

struct ErrorStats {
  bool shape_mismatch = false;
  bool dtype_mismatch = false;
  std::string mismatch_detail;  // "shape [4, 8] vs [4, 9]" / "dtype float32 vs float64"

  int64_t numel = 0;
  int64_t mismatched = 0;
  double max_abs = 0.0;
  double mean_abs = 0.0;
  double max_rel = 0.0;
  double mean_rel = 0.0;
  double max_ulp = 0.0;  // in units of the expected dtype's spacing at the expected value
  /// The worst element's error as a multiple of its tolerance, max |a - e| / (atol + rtol * |e|):
  /// <= 1 means every element is close. Drift is tracked in this unit, so values that grow over
  /// the steps do not make a constant relative error look like growth.
  double tol_ratio = 0.0;
  /// The chosen statistic (compare_tensors' `stat`) of the per-element absolute and relative
  /// errors; with Elementwise they are max_abs and max_rel.
  double stat_abs = 0.0;
  double stat_rel = 0.0;

  std::vector<int64_t> worst_index;  // empty when there is no element
  double worst_expected = 0.0;
  double worst_actual = 0.0;

  // The least tolerance that would have passed: rtol with the given atol, and atol with the
  // given rtol (infinite when a NaN/Inf pattern differs: no tolerance fixes that).
  double required_rtol = 0.0;
  double required_atol = 0.0;

  bool pass() const { return !shape_mismatch && !dtype_mismatch && mismatched == 0; }
  /// "3/512 elements differ; max abs 2.1e-03 at [1, 7] (expected 0.512, got 0.514)".
  std::string summary() const;
};

/// Compares actual with expected under tol. Works for every dtype, layout and device (values are
/// compared in float64 on the CPU; integers and bool exactly). Elements that are the same (equal,
/// equal infinities, NaN and NaN with equal_nan) have error 0; a differing NaN/Inf pattern has an
/// infinite error.
ErrorStats compare_tensors(const at::Tensor& expected, const at::Tensor& actual, Tolerance tol, bool equal_nan,
                           const ErrorStat& stat = {});

/// "[1, 7]".
std::string index_str(const std::vector<int64_t>& index);
/// The index of element `flat` of a contiguous tensor of these sizes.
std::vector<int64_t> unravel_index(int64_t flat, const std::vector<int64_t>& sizes);
/// A short number for reports: 3 significant digits, "nan", "inf".
std::string fmt_num(double v);
/// fmt_num rounded up in its last digit, for bounds that must pass when used as written
/// ("would pass with rtol 4.14e-03" when 4.131e-03 is needed).
std::string fmt_upper(double v);

}  // namespace gbc
