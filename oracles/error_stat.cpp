#include "oracles/error_stat.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>

namespace gbc {

std::optional<ErrorStat> ErrorStat::parse(const std::string& name, double quantile) {
  ErrorStat s;
  s.quantile = quantile;
  if (name == "elementwise") s.kind = Kind::Elementwise;
  else if (name == "max") s.kind = Kind::Max;
  else if (name == "mean") s.kind = Kind::Mean;
  else if (name == "quantile") s.kind = Kind::Quantile;
  else return std::nullopt;
  return s;
}

std::string ErrorStat::str() const {
  switch (kind) {
    case Kind::Elementwise: return "elementwise";
    case Kind::Max: return "max";
    case Kind::Mean: return "mean";
    case Kind::Quantile: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "quantile %g", quantile);
      return buf;
    }
  }
  return "?";
}

double reduce_errors(const at::Tensor& errors, const ErrorStat& stat) {
  if (errors.numel() == 0) return 0.0;
  at::Tensor e = errors.detach().to(at::kCPU).to(at::kDouble).reshape(-1);
  switch (stat.kind) {
    case ErrorStat::Kind::Elementwise:
    case ErrorStat::Kind::Max: return e.max().item<double>();
    case ErrorStat::Kind::Mean: return e.mean().item<double>();
    case ErrorStat::Kind::Quantile: {
      // numpy.quantile's default ("linear"): interpolate between the two nearest ranks. An infinite
      // neighbour makes the quantile infinite, which is what an aggregate over a NaN/Inf mismatch
      // should say.
      at::Tensor sorted = std::get<0>(e.sort());
      const int64_t n = sorted.numel();
      const double pos = stat.quantile * static_cast<double>(n - 1);
      const int64_t lo = static_cast<int64_t>(std::floor(pos));
      const int64_t hi = std::min<int64_t>(lo + 1, n - 1);
      const double a = sorted[lo].item<double>();
      const double b = sorted[hi].item<double>();
      const double frac = pos - static_cast<double>(lo);
      if (frac == 0.0) return a;
      if (std::isinf(b)) return b;
      return a + (b - a) * frac;
    }
  }
  return 0.0;
}

}  // namespace gbc
