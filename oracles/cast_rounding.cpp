#include "oracles/cast_rounding.h"

#include <ATen/ATen.h>

namespace gbc {

int64_t cast_rounding_elements(const at::Tensor& eager, const at::Tensor& compiled, const at::Tensor& reference,
                               const at::Tensor& down, const at::Tensor& up) {
  for (const at::Tensor* t : {&reference, &down, &up})
    if (!t->defined() || t->sizes() != eager.sizes()) return -1;
  if (compiled.sizes() != eager.sizes() || compiled.scalar_type() != eager.scalar_type() ||
      at::isFloatingType(eager.scalar_type()))
    return -1;
  const at::Tensor e = eager.cpu(), c = compiled.cpu();
  const auto as_output = [&](const at::Tensor& t) { return t.cpu().to(e.scalar_type()); };
  const at::Tensor differ = e != c;
  const at::Tensor reached = (c == as_output(reference)) | (c == as_output(down)) | (c == as_output(up));
  if (!(reached | ~differ).all().item<bool>()) return -1;
  return differ.sum().item<int64_t>();
}

}  // namespace gbc
