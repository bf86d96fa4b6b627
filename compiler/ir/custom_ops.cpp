#include "compiler/ir/custom_ops.h"

namespace gbc {

const std::vector<CustomKernelInfo>& custom_kernels() {
  static const std::vector<CustomKernelInfo> kernels = {
      {"scaled_tanh", 1, CustomKernelInfo::Result::SameAsFirst, "2 * tanh(x / 2)"},
      {"row_l2_normalize", 1, CustomKernelInfo::Result::SameAsFirst, "x / max(||x||_2 over the last dim, 1e-12)"},
      {"bias_relu", 2, CustomKernelInfo::Result::Broadcast, "relu(x + bias)"},
  };
  return kernels;
}

const CustomKernelInfo* find_custom_kernel(const std::string& name) {
  for (const auto& k : custom_kernels())
    if (k.name == name) return &k;
  return nullptr;
}

}  // namespace gbc
