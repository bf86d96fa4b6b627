// Layout plans: each non-contiguous layout gives a view of the requested shape with the expected
// strides, and layouts that cannot apply fall back to contiguous.
#include "harness/inputs/tensor_layout.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

namespace gbc {
namespace {

at::Tensor make(Layout layout, int64_t pick, const std::vector<int64_t>& sizes, LayoutPlan* plan_out = nullptr) {
  LayoutPlan plan = plan_layout(layout, pick, sizes);
  if (plan_out) *plan_out = plan;
  at::Tensor base = at::arange(1, 1 + [&] {
    int64_t n = 1;
    for (auto s : plan.base_sizes) n *= s;
    return n;
  }(), at::kFloat).reshape(plan.base_sizes);
  return view_with_layout(base, plan, sizes);
}

TEST(TensorLayoutTest, ViewsHaveTheRequestedShapeAndAreNotContiguous) {
  for (Layout l : {Layout::Transposed, Layout::Sliced, Layout::Expanded}) {
    at::Tensor t = make(l, 1, {3, 4});
    EXPECT_EQ(t.sizes().vec(), (std::vector<int64_t>{3, 4})) << layout_name(l);
    EXPECT_FALSE(t.is_contiguous()) << layout_name(l);
  }
  LayoutPlan p;
  at::Tensor s = make(Layout::Sliced, 1, {3, 4}, &p);
  EXPECT_EQ(p.dim, 1);
  EXPECT_EQ(s.stride(1), 2);
  EXPECT_EQ(s.storage_offset(), 1);
  at::Tensor e = make(Layout::Expanded, 0, {3, 4}, &p);
  EXPECT_EQ(e.stride(p.dim), 0);
}

TEST(TensorLayoutTest, FallsBackToContiguousWhereALayoutCannotApply) {
  EXPECT_EQ(plan_layout(Layout::Transposed, 0, {5}).layout, Layout::Contiguous);
  EXPECT_EQ(plan_layout(Layout::Sliced, 0, {}).layout, Layout::Contiguous);
  EXPECT_EQ(plan_layout(Layout::Expanded, 0, {1, 1}).layout, Layout::Contiguous);
  EXPECT_EQ(plan_layout(Layout::Expanded, 5, {1, 3}).dim, 1);
  EXPECT_EQ(make(Layout::Sliced, 0, {0, 2}).numel(), 0);
}

}  // namespace
}  // namespace gbc
