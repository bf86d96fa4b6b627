#include "oracles/eager_outlier.h"

#include <ATen/ATen.h>

#include "oracles/fp64_oracle.h"

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
                                const ToleranceSpec& spec, const Fp64Spec& fp64_spec) {
  EagerOutlier out;
  if (!fp64_ref.defined() || eager.sizes() != compiled.sizes() || eager.scalar_type() != compiled.scalar_type() ||
      fp64_ref.sizes() != eager.sizes())
    return out;
  const at::Tensor e = eager.cpu(), c = compiled.cpu();
  if (at::isFloatingType(e.scalar_type())) {
    // In float64: float16/bfloat16 comparisons and the tolerance need no care about their range.
    const at::Tensor e64 = e.to(at::kDouble), c64 = c.to(at::kDouble);
    const at::Tensor ref64 = fp64_ref.cpu().to(at::kDouble);
    const at::Tensor r64 = ref64.to(e.scalar_type()).to(at::kDouble);  // the reference as the output holds it
    const at::Tensor non_finite = ~at::isfinite(e64) | ~at::isfinite(c64);
    const at::Tensor differ = non_finite & ~((at::isnan(e64) & at::isnan(c64)) | (e64 == c64));
    out.elements = differ.sum().item<int64_t>();
    if (out.elements == 0) return out;
    // Settled: the compiled result is the reference's and eager's is not, or eager overflowed (a
    // NaN or Inf where the reference is finite in the output's dtype: eager has no usable value
    // there to compare with). A reference beyond the dtype's largest finite value rounds to Inf, so
    // there eager's Inf is the right answer and a finite compiled value is not excused.
    const at::Tensor eager_overflowed = ~at::isfinite(e64) & at::isfinite(r64);
    const at::Tensor settled = (agrees(c64, r64, spec.tol) & ~agrees(e64, r64, spec.tol)) | eager_overflowed;
    if (!(settled | ~differ).all().item<bool>()) return out;
    // Everything else is judged as usual (tolerance, else fp64), with the compiled result taken as
    // eager's at the settled elements.
    const at::Tensor rest = at::where(differ, c64, e64);
    out.eager_is_outlier = tolerance_oracle(rest, c64, spec).pass ||
                           fp64_oracle(rest.to(e.scalar_type()), c, fp64_ref.cpu(), fp64_spec).pass;
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

bool eager_shape_is_outlier(const at::Tensor& eager, const at::Tensor& compiled, const at::Tensor& fp64_ref,
                            const ToleranceSpec& spec) {
  if (!fp64_ref.defined() || eager.scalar_type() != compiled.scalar_type() || fp64_ref.sizes() != compiled.sizes() ||
      fp64_ref.sizes() == eager.sizes())
    return false;
  const at::Tensor c = compiled.cpu();
  if (c.numel() == 0) return true;
  if (at::isFloatingType(c.scalar_type())) {
    const at::Tensor r64 = fp64_ref.cpu().to(at::kDouble).to(c.scalar_type()).to(at::kDouble);
    return agrees(c.to(at::kDouble), r64, spec.tol).all().item<bool>();
  }
  return at::equal(c, fp64_ref.cpu().to(c.scalar_type()));
}

}  // namespace gbc
