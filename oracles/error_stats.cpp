#include "oracles/error_stats.h"

#include <ATen/ATen.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "compiler/aten/aten_convert.h"

namespace gbc {
namespace {

// Mantissa bits, for ULP distances in the expected tensor's own precision.
int mantissa_bits(at::ScalarType t) {
  switch (t) {
    case at::kHalf: return 10;
    case at::kBFloat16: return 7;
    case at::kFloat: return 23;
    default: return 52;
  }
}

std::vector<int64_t> unravel(int64_t flat, at::IntArrayRef sizes) {
  std::vector<int64_t> idx(sizes.size());
  for (size_t i = sizes.size(); i-- > 0;) {
    int64_t s = sizes[i] > 0 ? sizes[i] : 1;
    idx[i] = flat % s;
    flat /= s;
  }
  return idx;
}

}  // namespace

std::string fmt_num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string fmt_upper(double v) {
  if (!std::isfinite(v) || v <= 0) return fmt_num(v);
  const double scale = std::pow(10.0, std::floor(std::log10(v)) - 2);
  return fmt_num(std::ceil(v / scale * (1 - 1e-12)) * scale);
}

std::string index_str(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

std::vector<int64_t> unravel_index(int64_t flat, const std::vector<int64_t>& sizes) {
  std::vector<int64_t> idx(sizes.size());
  for (size_t i = sizes.size(); i-- > 0;) {
    const int64_t s = sizes[i] > 0 ? sizes[i] : 1;
    idx[i] = flat % s;
    flat /= s;
  }
  return idx;
}

std::string ErrorStats::summary() const {
  if (shape_mismatch || dtype_mismatch) return mismatch_detail;
  std::string s = std::to_string(mismatched) + "/" + std::to_string(numel) + " elements differ";
  if (!worst_index.empty())
    s += "; max abs " + fmt_num(max_abs) + ", max rel " + fmt_num(max_rel) + "; worst at " + index_str(worst_index) +
         " (expected " + fmt_num(worst_expected) + ", got " + fmt_num(worst_actual) + ")";
  return s;
}

namespace {

// x / d elementwise, where 0 / 0 is 0 and x / 0 is +inf (an error where none is allowed).
at::Tensor safe_ratio(const at::Tensor& x, const at::Tensor& d) {
  at::Tensor r = x / d.clamp_min(std::numeric_limits<double>::min());
  r = at::where(d.gt(0), r, at::where(x.gt(0), at::full_like(r, INFINITY), at::zeros_like(r)));
  return r;
}

void fill_worst(ErrorStats& st, const at::Tensor& e, const at::Tensor& a, int64_t worst, at::IntArrayRef sizes) {
  st.worst_index = unravel(worst, sizes);
  st.worst_expected = e[worst].item<double>();
  st.worst_actual = a[worst].item<double>();
}

}  // namespace

ErrorStats compare_tensors(const at::Tensor& expected, const at::Tensor& actual, Tolerance tol, bool equal_nan,
                           const ErrorStat& stat) {
  ErrorStats st;
  if (expected.sizes() != actual.sizes()) {
    st.shape_mismatch = true;
    st.mismatch_detail = "shape " + index_str(expected.sizes().vec()) + " expected, got " + index_str(actual.sizes().vec());
    st.required_rtol = st.required_atol = st.tol_ratio = st.stat_abs = st.stat_rel = std::numeric_limits<double>::infinity();
    return st;
  }
  if (expected.scalar_type() != actual.scalar_type()) {
    st.dtype_mismatch = true;
    st.mismatch_detail = "dtype " + std::string(dtype_name(from_aten(expected.scalar_type()))) + " expected, got " +
                         std::string(dtype_name(from_aten(actual.scalar_type())));
    st.required_rtol = st.required_atol = st.tol_ratio = st.stat_abs = st.stat_rel = std::numeric_limits<double>::infinity();
    return st;
  }
  st.numel = expected.numel();
  if (st.numel == 0) return st;

  const bool floating = at::isFloatingType(expected.scalar_type());
  at::Tensor e = expected.detach().to(at::kCPU).to(at::kDouble).contiguous().reshape(-1);
  at::Tensor a = actual.detach().to(at::kCPU).to(at::kDouble).contiguous().reshape(-1);
  at::Tensor e_abs = e.abs();
  at::Tensor bound = tol.atol + tol.rtol * e_abs;
  if (!floating) {
    // Integers beyond 2^53 lose precision in float64: count mismatches on the exact values.
    at::Tensor ei = expected.detach().to(at::kCPU).to(at::kLong).reshape(-1);
    at::Tensor ai = actual.detach().to(at::kCPU).to(at::kLong).reshape(-1);
    st.mismatched = ei.ne(ai).sum().item<int64_t>();
    at::Tensor diff = (a - e).abs();
    st.max_abs = diff.max().item<double>();
    st.mean_abs = diff.mean().item<double>();
    at::Tensor rel = diff / e_abs.clamp_min(1.0);
    st.max_rel = rel.max().item<double>();
    st.mean_rel = rel.mean().item<double>();
    st.max_ulp = st.max_abs;
    st.tol_ratio = safe_ratio(diff, bound).max().item<double>();
    st.stat_abs = reduce_errors(diff, stat);
    st.stat_rel = reduce_errors(rel, stat);
    fill_worst(st, e, a, diff.argmax().item<int64_t>(), expected.sizes());
    st.required_atol = st.max_abs;
    st.required_rtol = st.mismatched ? st.max_rel : 0.0;
    return st;
  }

  at::Tensor diff = (a - e).abs();
  at::Tensor same = a.eq(e);  // equal values, equal infinities
  if (equal_nan) same = same.logical_or(a.isnan().logical_and(e.isnan()));
  at::Tensor within = diff.le(bound);  // false where diff is NaN
  at::Tensor close = same.logical_or(within);
  st.mismatched = close.logical_not().sum().item<int64_t>();

  // Per-element errors: 0 where the values are the same, infinite where a NaN/Inf pattern differs.
  at::Tensor pattern = same.logical_not().logical_and(diff.isfinite().logical_not());
  at::Tensor err = at::where(same, at::zeros_like(diff), diff);
  err = at::where(pattern, at::full_like(err, INFINITY), err);
  at::Tensor rel = safe_ratio(err, e_abs);
  const bool pattern_differs = pattern.any().item<bool>();
  const double inf = std::numeric_limits<double>::infinity();

  // Finite errors give the means; a differing pattern makes the maxima infinite.
  at::Tensor d_finite = at::where(err.isfinite(), err, at::zeros_like(err));
  st.max_abs = err.max().item<double>();
  st.mean_abs = d_finite.sum().item<double>() / static_cast<double>(st.numel);
  st.max_rel = rel.max().item<double>();
  at::Tensor rel_finite = at::where(rel.isfinite(), rel, at::zeros_like(rel));
  st.mean_rel = rel_finite.sum().item<double>() / static_cast<double>(st.numel);
  st.tol_ratio = safe_ratio(err, bound).max().item<double>();
  st.stat_abs = reduce_errors(err, stat);
  st.stat_rel = reduce_errors(rel, stat);

  // ULP: the error over the spacing of representable values at the expected value.
  int mb = mantissa_bits(expected.scalar_type());
  at::Tensor exponent = at::floor(at::log2(e_abs.clamp_min(std::ldexp(1.0, -1022))));
  at::Tensor spacing = at::pow(2.0, exponent - mb);
  st.max_ulp = pattern_differs ? inf : (d_finite / spacing).max().item<double>();

  // The worst element: a pattern mismatch first, else the largest excess over the tolerance.
  at::Tensor excess = diff - bound;
  excess = at::where(close, at::full_like(excess, -INFINITY), excess);
  excess = at::where(excess.isnan(), at::full_like(excess, INFINITY), excess);
  fill_worst(st, e, a, st.mismatched ? excess.argmax().item<int64_t>() : d_finite.argmax().item<int64_t>(),
             expected.sizes());

  if (pattern_differs) {
    st.required_rtol = st.required_atol = inf;
  } else if (st.mismatched) {
    // Per element: need atol + rtol*|e| >= diff.
    at::Tensor need_rtol = safe_ratio((d_finite - tol.atol).clamp_min(0), e_abs);
    st.required_rtol = need_rtol.max().item<double>();
    st.required_atol = (d_finite - tol.rtol * e_abs).clamp_min(0).max().item<double>();
  }
  return st;
}

}  // namespace gbc
