// ATen implementations of the `custom` kernel registry (compiler/ir/custom_ops.h). They are the
// reference for what a compiler must reproduce when a model calls an opaque custom op; each is
// written with the same ATen calls a PyTorch user's Python implementation would make.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace gbc {

/// Runs the registered kernel `name` on `args`. Throws std::invalid_argument for an unknown name
/// or a wrong number of arguments (the frontend checks both, so this only guards direct callers).
at::Tensor run_custom_kernel(const std::string& name, const std::vector<at::Tensor>& args);

}  // namespace gbc
