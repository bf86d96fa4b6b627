#include "oracles/eager_outlier.h"

#include <ATen/ATen.h>

namespace gbc {
namespace {

// Whether a and b agree elementwise as float results: both NaN, equal (infinities included), or
// finite and within the tolerance of b.
at::Tensor agrees(const at::Tensor& a, const at::Tensor& b, const Tolerance& tol) {
  at::Tensor close = at::isfinite(a) & at::isfinite(b) & ((a - b).abs() <= tol.atol + tol.rtol * b.abs());
  return (at::isnan(a) & at::isnan(b)) | (a == b) | close;
}

}  // namespace

EagerOutlier find_eager_outlier(const at::Tensor& eager, const at::Tensor& compiled, const at::Tensor& fp64_ref,
                                const ToleranceSpec& spec) {
  EagerOutlier out;
  if (!fp64_ref.defined() || eager.sizes() != compiled.sizes() || eager.scalar_type() != compiled.scalar_type() ||
      fp64_ref.sizes() != eager.sizes())
    return out;
  const at::Tensor e = eager.cpu(), c = compiled.cpu();
  if (at::isFloatingType(e.scalar_type())) {
    // In float64: float16/bfloat16 comparisons and the tolerance need no care about their range.
    const at::Tensor e64 = e.to(at::kDouble), c64 = c.to(at::kDouble);
    const at::Tensor r64 = fp64_ref.cpu().to(e.scalar_type()).to(at::kDouble);  // the reference as the output holds it
    const at::Tensor non_finite = ~at::isfinite(e64) | ~at::isfinite(c64);
    const at::Tensor differ = non_finite & ~((at::isnan(e64) & at::isnan(c64)) | (e64 == c64));
    out.elements = differ.sum().item<int64_t>();
    if (out.elements == 0) return out;
    const at::Tensor settled = agrees(c64, r64, spec.tol) & ~agrees(e64, r64, spec.tol);
    if (!(settled | ~differ).all().item<bool>()) return out;
    // Everything else is judged as usual: eager with the settled elements taken as right.
    const at::Tensor rest = at::where(differ, c64, e64);
    out.eager_is_outlier = tolerance_oracle(rest, c64, spec).pass;
    return out;
  }
  const at::Tensor r = fp64_ref.cpu().to(e.scalar_type());
  const at::Tensor differ = e != c;
  out.elements = differ.sum().item<int64_t>();
  if (out.elements == 0) return out;
  const at::Tensor settled = (c == r) & (e != r);
  out.eager_is_outlier = (settled | ~differ).all().item<bool>();
  return out;
}

}  // namespace gbc
