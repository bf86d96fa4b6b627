#include "oracles/fp64_oracle.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>

#include "oracles/error_ratio.h"

namespace gbc {
namespace {

double error_of(const at::Tensor& err, const ErrorStat& stat) {
  if (err.numel() == 0) return 0.0;
  if (stat.kind == ErrorStat::Kind::Elementwise) return err.pow(2).mean().sqrt().item<double>();  // RMSE
  return reduce_errors(err, stat);
}

}  // namespace

Fp64Errors fp64_errors(const at::Tensor& eager, const at::Tensor& compiled, const at::Tensor& fp64, const ErrorStat& stat) {
  at::Tensor e = eager.detach().to(at::kCPU).to(at::kDouble).reshape(-1);
  at::Tensor c = compiled.detach().to(at::kCPU).to(at::kDouble).reshape(-1);
  at::Tensor r = fp64.detach().to(at::kCPU).to(at::kDouble).reshape(-1);
  at::Tensor all_finite = e.isfinite().logical_and(c.isfinite()).logical_and(r.isfinite());
  // Where a value is not finite, fp64 cannot measure rounding: agreement between eager and compiled
  // is no error, disagreement is an infinite one.
  at::Tensor agree = e.eq(c).logical_or(e.isnan().logical_and(c.isnan()));
  at::Tensor nonfinite_mismatch = all_finite.logical_not().logical_and(agree.logical_not());
  at::Tensor zero = at::zeros_like(e);
  at::Tensor err_e = at::where(all_finite, (e - r).abs(), zero);
  at::Tensor err_c = at::where(all_finite, (c - r).abs(), zero);
  // Eager's own non-finite values (overflow that float64 avoids) are not charged to the compiled path.
  err_c = at::where(nonfinite_mismatch, at::full_like(err_c, INFINITY), err_c);
  Fp64Errors out;
  out.eager = error_of(err_e, stat);
  out.compiled = error_of(err_c, stat);
  out.samples = err_e.gt(0).logical_or(err_c.gt(0)).sum().item<int64_t>();
  return out;
}

Verdict fp64_oracle(const at::Tensor& eager, const at::Tensor& compiled, const at::Tensor& fp64, const Fp64Spec& spec) {
  Verdict v;
  v.oracle = oracle_name::kFp64;
  if (eager.sizes() != compiled.sizes() || eager.scalar_type() != compiled.scalar_type()) {
    v.pass = false;
    v.why = "the compiled result's shape or dtype differs from eager's";
    v.min_passing = "none";
    return v;
  }
  const Fp64Errors err = fp64_errors(eager, compiled, fp64, spec.stat);
  const double widening = rms_ratio_quantile(err.samples, kFp64FalseAlarm);
  const double factor = spec.multiplier * widening;
  const double allowed = factor * err.eager + spec.atol;
  const std::string what = spec.stat.kind == ErrorStat::Kind::Elementwise ? "RMS error" : spec.stat.str() + " error";
  std::string multiplier = fmt_num(spec.multiplier);
  if (widening > 1.005)
    multiplier += " x " + fmt_num(widening) + " (" + std::to_string(err.samples) + " element" +
                  (err.samples == 1 ? "" : "s") + ": eager's error is a small sample)";
  const std::string numbers = "compiled " + what + " vs float64 " + fmt_num(err.compiled) + ", eager's " +
                              fmt_num(err.eager) + " (allowed " + multiplier + " x " + fmt_num(err.eager) +
                              " + atol " + fmt_num(spec.atol) + " = " + fmt_num(allowed) + ")";
  v.pass = err.compiled <= allowed;
  if (v.pass) {
    v.why = numbers + ": the difference from eager is rounding";
    return v;
  }
  v.why = numbers + ": more than rounding";
  if (std::isinf(err.compiled)) {
    v.min_passing = "none: the compiled result has NaN/Inf where eager has none";
  } else {
    const double need_atol = err.compiled - factor * err.eager;
    std::string s = "atol " + fmt_upper(need_atol);
    if (err.eager > 0) s += " or fp64_multiplier " + fmt_upper((err.compiled - spec.atol) / (widening * err.eager));
    v.min_passing = s;
  }
  return v;
}

}  // namespace gbc
