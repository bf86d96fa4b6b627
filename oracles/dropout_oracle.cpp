#include "oracles/dropout_oracle.h"

#include <ATen/ATen.h>

#include <cmath>

#include "oracles/determinism_oracle.h"

namespace gbc {

Verdict dropout_oracle(const at::Tensor& input, const at::Tensor& actual, const DropoutSpec& spec) {
  Verdict v;
  v.oracle = oracle_name::kDropout;
  if (input.sizes() != actual.sizes() || input.scalar_type() != actual.scalar_type()) {
    v.pass = false;
    v.why = "the result's shape or dtype differs from the dropout input's";
    v.min_passing = "none";
    return v;
  }
  if (!spec.training) {
    const BitwiseDiff d = bitwise_compare(input, actual);
    if (d.equal) return v;
    v.pass = false;
    v.why = "dropout in eval mode is the identity, but the result differs from its input: " + d.summary();
    v.min_passing = "none: eval-mode dropout must be exact";
    return v;
  }
  at::Tensor x = input.detach().to(at::kCPU).to(at::kDouble).reshape(-1);
  at::Tensor y = actual.detach().to(at::kCPU).to(at::kDouble).reshape(-1);
  const double keep = 1.0 - spec.p;
  const double scale = keep > 0 ? 1.0 / keep : 0.0;
  at::Tensor kept_value = x * scale;
  at::Tensor bound = spec.tol.atol + spec.tol.rtol * kept_value.abs();
  at::Tensor is_zero = y.eq(0);
  at::Tensor is_kept = (y - kept_value).abs().le(bound).logical_or(y.eq(kept_value));
  // NaN or Inf inputs give NaN or Inf whether kept (x * scale) or dropped (x * 0 is NaN for Inf).
  is_kept = is_kept.logical_or(x.isfinite().logical_not().logical_and(y.isfinite().logical_not()));
  at::Tensor neither = is_zero.logical_or(is_kept).logical_not();
  int64_t bad = neither.sum().item<int64_t>();
  std::string kept_by_fp64;
  if (bad > 0 && spec.input_fp64.defined() && spec.input_fp64.numel() == x.numel()) {
    // The elements this path kept, against the float64 reference's kept values: eager's own
    // rounding of x is no fault of the path when its values are the more accurate ones.
    at::Tensor kept = y.ne(0).logical_and(y.isfinite());
    at::Tensor x64 = spec.input_fp64.detach().to(at::kCPU).to(at::kDouble).reshape(-1);
    const at::Tensor eager_kept = kept_value.masked_select(kept), got_kept = y.masked_select(kept),
                     fp64_kept = (x64 * scale).masked_select(kept);
    // Where eager's argument overflowed (NaN or Inf, the float64 reference finite: layer_norm's
    // one-pass moments near the float32 maximum) there is no eager rounding to measure: the kept
    // value must be the reference's within the tolerance. The rest by the fp64 oracle's rule.
    const at::Tensor overflowed = eager_kept.isfinite().logical_not().logical_and(fp64_kept.isfinite());
    const at::Tensor rest = overflowed.logical_not();
    Verdict f = fp64_oracle(eager_kept.masked_select(rest), got_kept.masked_select(rest), fp64_kept.masked_select(rest), spec.fp64);
    const int64_t n_overflowed = overflowed.sum().item<int64_t>();
    if (f.pass && n_overflowed > 0) {
      const at::Tensor close = (got_kept - fp64_kept).abs().le(spec.tol.atol + spec.tol.rtol * fp64_kept.abs());
      f.pass = close.logical_or(rest).all().item<bool>();
      f.why += "; at " + std::to_string(n_overflowed) +
               " kept element(s) eager's argument is NaN/Inf where the float64 reference's is finite (eager's own overflow)" +
               (f.pass ? ", and the kept values are the reference's" : ", but the kept values are not the reference's");
    }
    if (f.pass) {
      is_kept = is_kept.logical_or(kept);
      neither = is_zero.logical_or(is_kept).logical_not();
      bad = neither.sum().item<int64_t>();
      kept_by_fp64 = "; the kept values judged against the float64 reference: " + f.why;
    }
  }
  v.stats.numel = y.numel();
  v.stats.mismatched = bad;
  if (bad > 0) {
    const int64_t i = neither.to(at::kByte).argmax().item<int64_t>();
    v.pass = false;
    v.stats.worst_expected = kept_value[i].item<double>();
    v.stats.worst_actual = y[i].item<double>();
    v.why = std::to_string(bad) + "/" + std::to_string(y.numel()) + " elements are neither 0 nor input/(1-p) = input x " +
            fmt_num(scale) + "; first at flat index " + std::to_string(i) + ": input x scale = " +
            fmt_num(v.stats.worst_expected) + ", got " + fmt_num(v.stats.worst_actual);
    v.min_passing = "none: a wrong scale or value is not a tolerance matter";
    return v;
  }
  // Elements whose kept value is (close to) zero cannot show whether they were dropped.
  at::Tensor informative = kept_value.abs().gt(bound);
  const int64_t n = informative.sum().item<int64_t>();
  const int64_t k = is_kept.logical_and(is_zero.logical_not()).logical_and(informative).sum().item<int64_t>();
  const double expected = static_cast<double>(n) * keep;
  const double sigma = std::sqrt(static_cast<double>(n) * keep * spec.p);
  const double allowed = kDropoutSigmas * sigma + 1.0;
  const double off = std::fabs(static_cast<double>(k) - expected);
  v.why = "kept " + std::to_string(k) + "/" + std::to_string(n) + " informative elements, expected " + fmt_num(expected) +
          " +- " + fmt_num(allowed) + " for p = " + fmt_num(spec.p) + kept_by_fp64;
  if (off <= allowed) return v;
  v.pass = false;
  v.why = "the kept fraction is wrong: " + v.why;
  v.min_passing = "none: the mask's keep rate is not 1-p (" + fmt_num(sigma > 0 ? off / sigma : INFINITY) +
                  " standard deviations off)";
  return v;
}

}  // namespace gbc
