// Layout plans: each non-contiguous layout gives a view of the requested shape with the expected
// strides, and layouts that cannot apply fall back to contiguous; layout_of reads each view's
// layout back from its strides, with_layout lays contiguous values out as it again, and an expanded
// layout only fits values that are equal along its dim.
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

TEST(TensorLayoutTest, LayoutOfAViewLaysItsValuesOutTheSameWay) {
  for (Layout l : {Layout::Transposed, Layout::Sliced, Layout::Expanded})
    for (int64_t pick : {0, 1}) {
      LayoutPlan planned;
      const at::Tensor view = make(l, pick, {3, 4}, &planned);
      const LayoutPlan read = layout_of(view);
      EXPECT_EQ(read.layout, l) << layout_name(l);
      EXPECT_EQ(read.dim, planned.dim) << layout_name(l);
      const at::Tensor again = with_layout(view.contiguous(), read);
      EXPECT_TRUE(at::equal(again, view)) << layout_name(l);
      EXPECT_EQ(again.strides(), view.strides()) << layout_name(l);
      EXPECT_EQ(again.storage_offset(), view.storage_offset()) << layout_name(l);
      // A copy made from the whole storage keeps the layout.
      const at::Tensor copy = storage_base(view).clone().as_strided(view.sizes(), view.strides(), view.storage_offset());
      EXPECT_TRUE(at::equal(copy, view)) << layout_name(l);
    }
  EXPECT_EQ(layout_of(at::ones({3, 4})).layout, Layout::Contiguous);
}

TEST(TensorLayoutTest, AnExpandedLayoutFitsOnlyEqualValuesAlongItsDim) {
  const at::Tensor rows = at::arange(4, at::kFloat).reshape({1, 4}).repeat({3, 1});  // equal along dim 0
  EXPECT_EQ(fit_layout(rows, Layout::Expanded, 0).layout, Layout::Expanded);
  EXPECT_EQ(fit_layout(rows, Layout::Expanded, 1).layout, Layout::Contiguous);
  EXPECT_EQ(fit_layout(rows.narrow(0, 0, 1), Layout::Expanded, 0).layout, Layout::Contiguous);  // size 1 now
  EXPECT_EQ(fit_layout(at::full({2, 2}, NAN), Layout::Expanded, 1).layout, Layout::Expanded);
  EXPECT_EQ(fit_layout(rows, Layout::Sliced, 2).layout, Layout::Contiguous);
  const at::Tensor e = with_layout(rows, fit_layout(rows, Layout::Expanded, 0));
  EXPECT_EQ(e.stride(0), 0);
  EXPECT_TRUE(at::equal(e, rows));
}

}  // namespace
}  // namespace gbc
