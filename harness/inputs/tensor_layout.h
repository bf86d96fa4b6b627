// Makes a non-contiguous tensor of a given shape: the values are drawn into a contiguous base of
// another shape, and the tensor is a view of it (transposed, strided slice, expanded), as user
// code produces with .t(), x[:, ::2] or .expand(). The reducer and the files that hold failing
// inputs (inputs.json, manifest.json) keep values contiguous and the layout beside them, and lay
// them out again (layout_of, with_layout). Test: tests/inputs/tensor_layout_test.cpp.
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

/// The layout `t` has by its strides: which of the views above it is (Contiguous when none is).
LayoutPlan layout_of(const at::Tensor& t);

/// `layout` at `dim` for `values`, or Contiguous where it cannot apply: a rank it does not fit, or
/// an expanded dim of size 1 or whose values are not all equal along it.
LayoutPlan fit_layout(const at::Tensor& values, Layout layout, int64_t dim);

/// `values` laid out as `plan` (a fit_layout result) says: a view of a fresh base with the same
/// values; a contiguous copy for Contiguous.
at::Tensor with_layout(const at::Tensor& values, const LayoutPlan& plan);

/// The contiguous 1-D tensor over all of `t`'s storage, which `t` views at its strides and offset
/// (an as_strided of a clone of it is an independent copy of `t` in the same layout).
at::Tensor storage_base(const at::Tensor& t);

}  // namespace gbc
