#include "oracles/drift_oracle.h"

#include <algorithm>
#include <cmath>

namespace gbc {

Verdict drift_oracle(const std::vector<DriftStep>& steps) {
  Verdict v;
  v.oracle = oracle_name::kDrift;
  if (steps.empty()) return v;
  double worst = 0.0;
  size_t worst_step = 0;
  for (size_t s = 0; s < steps.size(); ++s)
    if (!(steps[s].ratio <= worst)) {  // NaN counts as the worst
      worst = steps[s].ratio;
      worst_step = s;
    }
  v.stats.tol_ratio = worst;
  v.stats.max_abs = steps[worst_step].max_abs;
  v.stats.max_rel = steps[worst_step].max_rel;
  for (size_t s = 0; s < steps.size(); ++s) {
    if (steps[s].ratio <= 1.0) continue;
    v.pass = false;
    v.why = "the error passed the tolerance at step " + std::to_string(s) + " of " + std::to_string(steps.size()) +
            " (" + fmt_num(steps[s].ratio) + "x the tolerance; worst " + fmt_num(worst) + "x at step " +
            std::to_string(worst_step) + ")";
    v.min_passing = std::isfinite(worst) ? "the tolerance times " + fmt_upper(worst) + " (rtol and atol both)"
                                         : "none: a NaN/Inf pattern differs";
    return v;
  }
  const int n = static_cast<int>(steps.size());
  if (n < kDriftMinSteps) return v;
  // The running maximum: "the error so far", which only grows, so one lucky step cannot hide it.
  auto envelope = [&](int upto) {
    double m = 0.0;
    for (int s = 0; s < upto; ++s) m = std::max(m, steps[s].ratio);
    return m;
  };
  const double q = envelope(n / 4), h = envelope(n / 2), f = envelope(n);
  if (f < kDriftNoiseFloor) return v;
  const double g1 = q > 0 ? h / q : (h > 0 ? INFINITY : 1.0);
  const double g2 = h > 0 ? f / h : (f > 0 ? INFINITY : 1.0);
  if (g1 > kSuperlinearFactor && g2 > kSuperlinearFactor) {
    v.pass = false;
    v.why = "the error grows faster than linearly: x" + fmt_num(g1) + " from step " + std::to_string(n / 4) + " to " +
            std::to_string(n / 2) + " and x" + fmt_num(g2) + " from there to step " + std::to_string(n) + ", now at " +
            fmt_num(f) + "x the tolerance";
    v.min_passing = "none: growth, not its size, fails (more steps would pass the tolerance)";
  }
  return v;
}

}  // namespace gbc
