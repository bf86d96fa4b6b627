// Makes a non-contiguous tensor of a given shape: the values are drawn into a contiguous base of
// another shape, and the tensor is a view of it (transposed, strided slice, expanded), as user
// code produces with .t(), x[:, ::2] or .expand(). Test: tests/inputs/tensor_layout_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "harness/inputs/case_recipe.h"

namespace gbc {

struct LayoutPlan {
  Layout layout = Layout::Contiguous;  // Contiguous when the requested layout cannot apply
  int64_t dim = 0;                     // the sliced or expanded dim
  std::vector<int64_t> base_sizes;     // the contiguous tensor the values are drawn into
};

/// Resolves `layout` for a tensor of `sizes`: Transposed needs rank >= 2, Sliced rank >= 1,
/// Expanded a dim of size > 1. `pick` chooses the dim among those that fit.
LayoutPlan plan_layout(Layout layout, int64_t pick, const std::vector<int64_t>& sizes);

/// The view of `base` (of plan.base_sizes) that has `sizes` and the planned layout.
at::Tensor view_with_layout(const at::Tensor& base, const LayoutPlan& plan, const std::vector<int64_t>& sizes);

}  // namespace gbc
