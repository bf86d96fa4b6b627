#include "harness/inputs/tensor_layout.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace gbc {

LayoutPlan plan_layout(Layout layout, int64_t pick, const std::vector<int64_t>& sizes) {
  LayoutPlan p;
  p.base_sizes = sizes;
  const int64_t rank = static_cast<int64_t>(sizes.size());
  switch (layout) {
    case Layout::Contiguous: break;
    case Layout::Transposed:
      if (rank < 2) break;
      p.layout = layout;
      std::swap(p.base_sizes[rank - 1], p.base_sizes[rank - 2]);
      break;
    case Layout::Sliced:
      if (rank < 1) break;
      p.layout = layout;
      p.dim = pick % rank;
      // Elements 1, 3, 5, ...: a stride of 2 and a storage offset, both of which kernels get wrong.
      p.base_sizes[p.dim] = 2 * sizes[p.dim] + 1;
      break;
    case Layout::Expanded: {
      std::vector<int64_t> fit;
      for (int64_t d = 0; d < rank; ++d)
        if (sizes[d] > 1) fit.push_back(d);
      if (fit.empty()) break;
      p.layout = layout;
      p.dim = fit[pick % static_cast<int64_t>(fit.size())];
      p.base_sizes[p.dim] = 1;
      break;
    }
  }
  return p;
}

at::Tensor view_with_layout(const at::Tensor& base, const LayoutPlan& plan, const std::vector<int64_t>& sizes) {
  switch (plan.layout) {
    case Layout::Contiguous: return base;
    case Layout::Transposed: return base.transpose(-1, -2);
    case Layout::Sliced: return base.slice(plan.dim, 1, 2 * sizes[plan.dim] + 1, 2);
    case Layout::Expanded: return base.expand(sizes);
  }
  return base;
}

namespace {

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(sizes[d], 1);
  return strides;
}

// Equal elements, NaN equal to NaN (a tensor of NaNs expanded is still that tensor).
bool same_values(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor eq = a.eq(b);
  if (a.is_floating_point()) eq = eq.logical_or(a.isnan().logical_and(b.isnan()));
  return eq.all().item<bool>();
}

}  // namespace

LayoutPlan layout_of(const at::Tensor& t) {
  LayoutPlan p;
  const std::vector<int64_t> sizes = t.sizes().vec(), strides = t.strides().vec();
  p.base_sizes = sizes;
  if (t.numel() <= 1 || t.is_contiguous()) return p;
  const int64_t rank = t.dim();
  for (int64_t d = 0; d < rank; ++d)
    if (strides[d] == 0 && sizes[d] > 1) return fit_layout(t, Layout::Expanded, d);
  if (rank >= 2 && t.transpose(-1, -2).is_contiguous()) return plan_layout(Layout::Transposed, 0, sizes);
  for (int64_t d = 0; d < rank; ++d) {
    const LayoutPlan sliced = plan_layout(Layout::Sliced, d, sizes);
    std::vector<int64_t> want = contiguous_strides(sliced.base_sizes);
    const int64_t offset = want[d];
    want[d] *= 2;
    if (want == strides && t.storage_offset() == offset) return sliced;
  }
  return p;
}

LayoutPlan fit_layout(const at::Tensor& values, Layout layout, int64_t dim) {
  const std::vector<int64_t> sizes = values.sizes().vec();
  const int64_t rank = values.dim();
  LayoutPlan contiguous;
  contiguous.base_sizes = sizes;
  if (layout == Layout::Sliced || layout == Layout::Expanded) {
    if (dim < 0 || dim >= rank) return contiguous;
    if (layout == Layout::Expanded) {
      if (sizes[dim] <= 1) return contiguous;
      const at::Tensor first = values.narrow(dim, 0, 1);
      if (!same_values(first.expand(sizes), values)) return contiguous;
      LayoutPlan p = contiguous;
      p.layout = layout;
      p.dim = dim;
      p.base_sizes[dim] = 1;
      return p;
    }
    return plan_layout(layout, dim, sizes);  // Sliced picks dim % rank, which is dim
  }
  return plan_layout(layout, 0, sizes);
}

at::Tensor with_layout(const at::Tensor& values, const LayoutPlan& plan) {
  const std::vector<int64_t> sizes = values.sizes().vec();
  switch (plan.layout) {
    case Layout::Contiguous: return values.contiguous();
    case Layout::Transposed: return view_with_layout(values.transpose(-1, -2).contiguous(), plan, sizes);
    case Layout::Sliced: {
      at::Tensor base = at::zeros(plan.base_sizes, values.options());
      view_with_layout(base, plan, sizes).copy_(values);
      return view_with_layout(base, plan, sizes);
    }
    case Layout::Expanded: return view_with_layout(values.narrow(plan.dim, 0, 1).contiguous(), plan, sizes);
  }
  return values.contiguous();
}

at::Tensor storage_base(const at::Tensor& t) {
  const int64_t elements = static_cast<int64_t>(t.storage().nbytes()) / static_cast<int64_t>(t.element_size());
  return at::empty({0}, t.options()).set_(t.storage(), 0, {elements}, {1});
}

}  // namespace gbc
