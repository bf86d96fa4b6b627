// How far apart two equally accurate computations' errors can lie by chance. When eager and a
// compiled path both round a reduction differently, each element's error against float64 is, to a
// good approximation, an independent zero-mean normal draw of the same variance; the ratio of
// their root-mean-square errors over k elements is then sqrt(F(k, k)) (Snedecor's F with k and k
// degrees of freedom). For a scalar output that ratio has a Cauchy-like tail: eager can be lucky
// by a factor of hundreds. The fp64 oracle widens its multiplier by this quantile so that a
// rounding-equivalent result fails with probability at most alpha.
// Test: tests/oracles/fp64_oracle_test.cpp.
#pragma once

#include <cstdint>

namespace gbc {

/// The (1 - alpha) quantile of RMS(a) / RMS(b) for a and b each k i.i.d. draws of N(0, s^2):
/// sqrt of the F(k, k) quantile. 1 for k = 0; alpha in (0, 0.5). Exact (regularized incomplete
/// beta) up to kExactRatioSamples samples, a log-normal approximation (relative error < 1e-3)
/// beyond.
double rms_ratio_quantile(int64_t k, double alpha);

constexpr int64_t kExactRatioSamples = 4096;

}  // namespace gbc
