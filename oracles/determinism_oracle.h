// Bit-for-bit comparison of two runs on the same inputs (and the same RNG seed). The determinism
// oracle applies it to two runs of a compiled path; the runner applies it to two eager runs, where
// a difference makes the case an unusable reference rather than a compiler bug.
// Test: tests/oracles/pattern_oracles_test.cpp, tests/runner/check_runner_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "oracles/verdict.h"

namespace gbc {

struct BitwiseDiff {
  bool equal = true;
  bool shape_differs = false;  // shapes or dtypes differ
  int64_t differing = 0;       // elements whose bits differ
  std::vector<int64_t> first_index;
  double first_a = 0.0, first_b = 0.0;
  double max_abs = 0.0;  // the largest difference between the runs (finite elements)

  /// "3/512 elements differ bit for bit; first at [0, 4]: 0.512 vs 0.513".
  std::string summary() const;
};

/// Compares bits, so -0 differs from +0, except that every NaN equals every NaN: a NaN's sign and
/// payload carry no value, and kernels legitimately produce either from one input (a vectorized
/// loop body and its scalar tail, chosen by the allocation's alignment). Any layout and device.
BitwiseDiff bitwise_compare(const at::Tensor& a, const at::Tensor& b);

/// `first` and `second` are the same path's results for one output on the same inputs.
Verdict determinism_oracle(const at::Tensor& first, const at::Tensor& second);

}  // namespace gbc
