// The built-in registry of `custom` kernels: opaque to compilers unless the model gives
// `meta: same_as_input`, like a PyTorch custom op without a fake (meta) implementation.
// Their ATen implementations are in compiler/aten/custom_kernels.cpp.
#pragma once

#include <string>
#include <vector>

namespace gbc {

struct CustomKernelInfo {
  std::string name;
  int num_args;
  enum class Result { SameAsFirst, Broadcast } result;
  std::string doc;
};

const std::vector<CustomKernelInfo>& custom_kernels();
const CustomKernelInfo* find_custom_kernel(const std::string& name);

}  // namespace gbc
