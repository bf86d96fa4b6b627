// The drift oracle (`check.iterations`): outputs are fed back as inputs for N steps on eager and on
// the compiled path; each step's error is measured in units of the tolerance (ErrorStats::tol_ratio,
// 1.0 = at the tolerance), so values that grow over the steps do not fake a growing error.
// It fails when the error passes the tolerance at some step, or when it grows faster than linearly:
// the running maximum more than kSuperlinearFactor-fold from step N/4 to N/2 and again from N/2 to
// N, while already above kDriftNoiseFloor of the tolerance (below that, single rounding flips
// dominate and growth cannot be told from noise).
// Test: tests/oracles/stateful_oracles_test.cpp, tests/runner/check_runner_test.cpp.
#pragma once

#include <vector>

#include "oracles/verdict.h"

namespace gbc {

/// One step's error over every output of the step (the worst output).
struct DriftStep {
  double max_abs = 0.0;
  double max_rel = 0.0;
  double ratio = 0.0;  // worst error / its tolerance
};

/// Linear growth doubles the error from N/4 to N/2 and from N/2 to N; quadratic growth quadruples it.
constexpr double kSuperlinearFactor = 2.5;
constexpr double kDriftNoiseFloor = 0.1;
/// Fewer steps than this are too few to call growth superlinear (the tolerance still applies).
constexpr int kDriftMinSteps = 8;

Verdict drift_oracle(const std::vector<DriftStep>& steps);

}  // namespace gbc
