#include "oracles/threshold_rounding.h"

#include <ATen/ATen.h>

namespace gbc {
namespace {

// Elementwise: a and b are the same result (both NaN, equal, or finite and within tol of b).
at::Tensor same(const at::Tensor& a, const at::Tensor& b, const Tolerance& tol) {
  if (!at::isFloatingType(a.scalar_type())) return a == b;
  const at::Tensor close = at::isfinite(a) & at::isfinite(b) & ((a - b).abs() <= tol.atol + tol.rtol * b.abs());
  return (at::isnan(a) & at::isnan(b)) | (a == b) | close;
}

}  // namespace

int64_t threshold_rounding_elements(const at::Tensor& eager, const at::Tensor& compiled, const at::Tensor& reference,
                                    const at::Tensor& down, const at::Tensor& up, const Tolerance& tol) {
  for (const at::Tensor* t : {&reference, &down, &up})
    if (!t->defined() || t->sizes() != eager.sizes()) return -1;
  if (compiled.sizes() != eager.sizes() || compiled.scalar_type() != eager.scalar_type()) return -1;
  const bool floating = at::isFloatingType(eager.scalar_type());
  // Floats in float64, the references as the output holds them.
  const auto as_output = [&](const at::Tensor& t) {
    const at::Tensor o = t.cpu().to(eager.scalar_type());
    return floating ? o.to(at::kDouble) : o;
  };
  const at::Tensor e = as_output(eager), c = as_output(compiled);
  const at::Tensor differ = ~same(c, e, tol);
  const at::Tensor reached = same(c, as_output(reference), tol) | same(c, as_output(down), tol) | same(c, as_output(up), tol);
  if (!(reached | ~differ).all().item<bool>()) return -1;
  return differ.sum().item<int64_t>();
}

}  // namespace gbc
