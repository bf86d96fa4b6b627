#include "harness/inputs/tensor_layout.h"

#include <ATen/ATen.h>

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

}  // namespace gbc
