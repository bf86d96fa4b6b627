// The custom kernels' ATen bodies. Each mirrors its Python definition op for op (`x / 2` is
// at::div with a Scalar, `2 * t` is at::mul with a Scalar), so results match a PyTorch user's
// custom op bit for bit.
#include "compiler/aten/custom_kernels.h"

#include <ATen/ops/add.h>
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/div.h>
#include <ATen/ops/linalg_vector_norm.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/tanh.h>

#include <stdexcept>

#include "compiler/ir/custom_ops.h"
#include "compiler/ir/diagnostics.h"

namespace gbc {

at::Tensor run_custom_kernel(const std::string& name, const std::vector<at::Tensor>& args) {
  const CustomKernelInfo* info = find_custom_kernel(name);
  if (!info) throw std::invalid_argument("no custom kernel named '" + name + "'");
  if (static_cast<int>(args.size()) != info->num_args)
    throw std::invalid_argument("custom kernel '" + name + "' takes " + std::to_string(info->num_args) + " args, got " +
                                std::to_string(args.size()));
  const at::Tensor& x = args[0];
  if (name == "scaled_tanh") return at::mul(at::tanh(at::div(x, 2)), 2);
  if (name == "row_l2_normalize") {
    // F.normalize(x, dim=-1): the norm is clamped so all-zero rows stay zero instead of NaN.
    at::Tensor norm = at::linalg_vector_norm(x, 2, std::vector<int64_t>{-1}, /*keepdim=*/true);
    return at::div(x, at::clamp_min(norm, 1e-12));
  }
  if (name == "bias_relu") return at::relu(at::add(x, args[1]));
  // A registry entry without a body here is gbcheck's bug, not the model's.
  internal_error("custom kernel '" + name + "' is registered but has no ATen implementation");
}

}  // namespace gbc
