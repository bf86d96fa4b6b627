// Judges one compared tensor (an output, or a graph input the model mutates) with the selected
// numeric oracles, combined as torch._dynamo's same(..., fp64_ref=...): nan_inf and signed_zero
// first (exact; signed_zero only where the config says IEEE pins the zero sign),
// then tolerance; when the tolerance fails, fp64 decides whether the difference is rounding, and a
// fp64 pass overrules the tolerance failure. A discrete difference (NaN/Inf pattern, integer or
// bool elements) that the fp64 reference shows to be eager's own error (eager_outlier.h) overrules
// the nan_inf and tolerance failures the same way, as does a data-dependent shape (nonzero) in
// which the compiled result is the reference's and eager's is not, and a difference that rounding
// at a threshold decides (an integer cast, floor, a comparison with a number: threshold_rounding.h). The fp64 reference is produced lazily, so it
// costs nothing for outputs within tolerance. Determinism, drift and dropout verdicts are the runner's,
// since they need other runs. Test: tests/oracles/fp64_oracle_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "oracles/error_stat.h"
#include "oracles/oracle_set.h"
#include "oracles/verdict.h"

namespace gbc {

struct JudgeConfig {
  OracleSet oracles;
  Tolerance tol;
  bool equal_nan = true;
  ErrorStat stat;
  double fp64_multiplier = 2.0;
  /// Whether IEEE 754 pins this tensor's zero sign (harness/runner/zero_sign_cone.h): the
  /// signed_zero oracle runs only then.
  bool zero_sign_pinned = false;
  /// The float64 reference run with the value under every threshold (an integer cast, floor, a
  /// comparison with a number) moved down, then up, by its tolerance (threshold_rounding.h); called
  /// at most once, and only for a difference nothing else settles; unset when there is none.
  std::function<std::pair<at::Tensor, at::Tensor>()> fp64_threshold_bounds;
};

struct Judgement {
  std::vector<Verdict> verdicts;  // in the order they were made
  /// The verdict that fails the tensor (nan_inf before numerics), or nullptr when it passes.
  const Verdict* failing() const;
  bool pass() const { return failing() == nullptr; }
  /// The tolerance oracle's statistics if it ran, else the first verdict's.
  ErrorStats stats() const;
};

/// `fp64` returns the float64 reference of this tensor (undefined when there is none, e.g. a
/// path that cannot be recomputed in float64); it is called at most once, and only when needed.
Judgement judge_tensor(const at::Tensor& eager, const at::Tensor& compiled, const std::function<at::Tensor()>& fp64,
                       const JudgeConfig& config);

}  // namespace gbc
