#include "oracles/error_ratio.h"

#include <cmath>

#include "compiler/ir/diagnostics.h"

namespace gbc {
namespace {

// The continued fraction of the incomplete beta function (modified Lentz), as in Numerical
// Recipes' betacf; converges quickly for x < (a + 1) / (a + b + 2), which holds below x = 0.5 for
// a = b.
double beta_cf(double a, double b, double x) {
  constexpr double kTiny = 1e-300, kEps = 1e-15;
  const double qab = a + b, qap = a + 1.0, qam = a - 1.0;
  double c = 1.0, d = 1.0 - qab * x / qap;
  if (std::fabs(d) < kTiny) d = kTiny;
  d = 1.0 / d;
  double h = d;
  for (int m = 1; m <= 100000; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    h *= d * c;
    aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
    d = 1.0 + aa * d;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = 1.0 + aa / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double del = d * c;
    h *= del;
    if (std::fabs(del - 1.0) < kEps) break;
  }
  return h;
}

// I_x(a, a) for x in (0, 0.5]: the regularized incomplete beta function with equal parameters.
double beta_lower_tail(double a, double x) {
  const double log_front = std::lgamma(2 * a) - 2 * std::lgamma(a) + a * std::log(x) + a * std::log1p(-x);
  return std::exp(log_front) * beta_cf(a, a, x) / a;
}

// The standard normal's (1 - alpha) quantile, by bisection on erfc.
double normal_upper_quantile(double alpha) {
  double lo = 0.0, hi = 40.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(mid / std::sqrt(2.0)) > alpha ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

}  // namespace

double rms_ratio_quantile(int64_t k, double alpha) {
  GBC_INTERNAL_ASSERT(alpha > 0 && alpha < 0.5, "rms_ratio_quantile: alpha out of (0, 0.5)");
  if (k <= 0) return 1.0;
  if (k > kExactRatioSamples) {
    // log of a chi-square over its degrees of freedom has variance ~2/k, so log F(k, k) ~ N(0, 4/k)
    // and log sqrt(F) ~ N(0, 1/k).
    return std::exp(normal_upper_quantile(alpha) / std::sqrt(static_cast<double>(k)));
  }
  // P(F > f) = I_s(k/2, k/2) with s = 1 / (1 + f); solve I_s = alpha for s in (0, 0.5).
  const double a = 0.5 * static_cast<double>(k);
  double lo = 0.0, hi = 0.5;
  for (int i = 0; i < 200 && hi - lo > 1e-17; ++i) {
    const double mid = 0.5 * (lo + hi);
    (beta_lower_tail(a, mid) < alpha ? lo : hi) = mid;
  }
  const double s = 0.5 * (lo + hi);
  return std::sqrt((1.0 - s) / s);
}

}  // namespace gbc
