// Layout specialization (compiler/kernel/specialize.h): iteration layouts of broadcast, permuted
// and per-row buffers; the index kind chosen for each layout; layout keys; kernel arguments.
#include <gtest/gtest.h>

#include "compiler/kernel/specialize.h"
#include "tests/kernel/kernel_test_util.h"

namespace gbc {
namespace {

using Sizes = std::vector<int64_t>;

LoweredKernel lower_model(const std::string& inputs, const std::string& graph, const std::string& outputs) {
  Model m = testing::load(testing::model_text(inputs, graph, outputs));
  const Graph& g = m.graph;
  PartitionPlan plan = partition_block(g, g.body);
  EXPECT_EQ(plan.groups.size(), 1u);
  return lower_group(g, g.body, plan.groups.at(0), "k");
}

size_t buffer(const LoweredKernel& k, const std::string& name) {
  for (size_t b = 0; b < k.kernel.buffers.size(); ++b)
    if (k.kernel.buffers[b].name == name) return b;
  ADD_FAILURE() << "no buffer " << name;
  return 0;
}

kir::IndexKind kind_of(const BufferLayout& layout, const LoweredKernel& k, size_t b) {
  std::vector<BufferLayout> all(k.kernel.buffers.size(), layout);
  return specialize_layouts(k, all).buffers[b].index;
}

TEST(Specialize, PointwiseLayouts) {
  LoweredKernel k = lower_model("  x: {shape: [3, 4]}\n  b: {shape: [4]}\n", "  - {id: y, op: add, args: [x, b]}\n", "[y]");
  Sizes iter = {3, 4};
  size_t x = buffer(k, "x"), b = buffer(k, "b");
  BufferLayout contiguous = iteration_layout(k, x, {3, 4}, {4, 1}, iter);
  BufferLayout transposed = iteration_layout(k, x, {3, 4}, {1, 3}, iter);
  BufferLayout every_other = iteration_layout(k, x, {3, 4}, {8, 2}, iter);
  BufferLayout row_broadcast = iteration_layout(k, x, {1, 4}, {4, 1}, iter);
  BufferLayout bias = iteration_layout(k, b, {4}, {1}, iter);
  BufferLayout one = iteration_layout(k, b, {1}, {1}, iter);
  EXPECT_EQ(bias.sizes, (Sizes{3, 4}));
  EXPECT_EQ(bias.strides, (Sizes{0, 1}));
  EXPECT_EQ(kind_of(contiguous, k, x), kir::IndexKind::Contiguous);
  EXPECT_EQ(kind_of(every_other, k, x), kir::IndexKind::Affine);
  EXPECT_EQ(kind_of(transposed, k, x), kir::IndexKind::Strided);
  EXPECT_EQ(kind_of(row_broadcast, k, x), kir::IndexKind::Strided);
  EXPECT_EQ(kind_of(bias, k, b), kir::IndexKind::Strided);
  EXPECT_EQ(kind_of(one, k, b), kir::IndexKind::Scalar);

  Specialization spec = specialize_layouts(k, {transposed, bias, contiguous});
  EXPECT_EQ(spec.layout_key, "T2,T2,C");
  EXPECT_EQ(spec.buffers[0].sizes, (Sizes{3, 4}));
  EXPECT_EQ(spec.buffers[0].strides, (Sizes{1, 3}));
  kir::Kernel compiled = specialized_kernel(k.kernel, spec);
  EXPECT_EQ(compiled.buffers[0].index, kir::IndexKind::Strided);
  EXPECT_EQ(compiled.buffers[0].rank, 2);
  EXPECT_EQ(specialize_layouts(k, {every_other, one, contiguous}).layout_key, "A,S,C");
}

TEST(Specialize, CollapsesMergeableDims) {
  LoweredKernel k = lower_model("  x: {shape: [2, 3, 4]}\n", "  - {id: y, op: neg, args: [x]}\n", "[y]");
  // Every other element of a [2, 3, 8] tensor steps through memory as one dim of stride 2.
  BufferLayout sliced = iteration_layout(k, 0, {2, 3, 4}, {24, 8, 2}, {2, 3, 4});
  Specialization spec = specialize_layouts(k, {sliced, sliced});
  EXPECT_EQ(spec.buffers[0].index, kir::IndexKind::Affine);
  EXPECT_EQ(spec.buffers[0].s0, 2);
  // Rows of a wider tensor: dims 0 and 1 merge, the last stays: rank 2 instead of 3.
  BufferLayout rows = iteration_layout(k, 0, {2, 3, 4}, {24, 8, 1}, {2, 3, 4});
  spec = specialize_layouts(k, {rows, rows});
  EXPECT_EQ(spec.buffers[0].index, kir::IndexKind::Strided);
  EXPECT_EQ(spec.buffers[0].sizes, (Sizes{6, 4}));
  EXPECT_EQ(spec.buffers[0].strides, (Sizes{8, 1}));
  EXPECT_EQ(spec.layout_key, "T2,T2");
}

TEST(Specialize, ReductionLayouts) {
  // Reduced over dim 0 of [5, 7]: the iteration order is [7 (o), 5 (r)].
  LoweredKernel k = lower_model("  x: {shape: [5, 7]}\n  b: {shape: [7]}\n",
                                "  - {id: s, op: sum, args: [x], dim: 0}\n"
                                "  - {id: y, op: mul, args: [s, b]}\n",
                                "[y]");
  Sizes iter = {5, 7};
  size_t x = buffer(k, "x"), b = buffer(k, "b"), y = buffer(k, "y");
  BufferLayout xl = iteration_layout(k, x, {5, 7}, {7, 1}, iter);
  EXPECT_EQ(xl.sizes, (Sizes{7, 5}));
  EXPECT_EQ(xl.strides, (Sizes{1, 7}));
  BufferLayout bl = iteration_layout(k, b, {7}, {1}, iter);
  EXPECT_EQ(bl.sizes, Sizes{7});
  BufferLayout yl = iteration_layout(k, y, {7}, {1}, iter);
  Specialization spec = specialize_layouts(k, {xl, bl, yl});
  EXPECT_EQ(spec.layout_key, "A,C,C");
  EXPECT_EQ(spec.buffers[x].s0, 1);
  EXPECT_EQ(spec.buffers[x].s1, 7);
  // The transposed tensor reduced over its dim 0 is contiguous in iteration order.
  BufferLayout xt = iteration_layout(k, x, {5, 7}, {1, 5}, iter);
  EXPECT_EQ(specialize_layouts(k, {xt, bl, yl}).buffers[x].index, kir::IndexKind::Contiguous);
  // One row broadcast over the reduced dim: constant along r, so read once per o (contiguous in o).
  BufferLayout broadcast_rows = iteration_layout(k, x, {1, 7}, {7, 1}, iter);
  Specialization per_row = specialize_layouts(k, {broadcast_rows, bl, yl});
  EXPECT_EQ(per_row.buffers[x].index, kir::IndexKind::Contiguous);
  EXPECT_TRUE(per_row.buffers[x].per_row);
  EXPECT_EQ(per_row.layout_key, "oC,C,C");
  EXPECT_EQ(specialized_kernel(k.kernel, per_row).buffers[x].level, kir::Level::Outer);
  EXPECT_EQ(specialized_kernel(k.kernel, spec).buffers[x].level, kir::Level::Full);

  KernelArgs args(k, spec, {nullptr, nullptr, nullptr}, iter, {});
  const GbcKernelArgs* a = args.get();
  EXPECT_EQ(a->numel, 35);
  EXPECT_EQ(a->outer, 7);
  EXPECT_EQ(a->inner, 5);
  EXPECT_EQ(a->buffers[x].s1, 7);
}

TEST(Specialize, OneRowBroadcastOverTheRowsIsRContiguous) {
  // A [1, 7] mask read by every row of a reduction over dim 1: offset o * 0 + r, which the
  // kernel may load as vectors only if it knows r's stride is 1 (its own layout key).
  LoweredKernel k = lower_model("  x: {shape: [5, 7]}\n  m: {shape: [1, 7]}\n",
                                "  - {id: a, op: mul, args: [x, m]}\n"
                                "  - {id: s, op: sum, args: [a], dim: 1}\n",
                                "[s]");
  Sizes iter = {5, 7};
  size_t x = buffer(k, "x"), m = buffer(k, "m"), s = buffer(k, "s");
  std::vector<BufferLayout> layouts(3);
  layouts[x] = iteration_layout(k, x, {5, 7}, {7, 1}, iter);
  layouts[s] = iteration_layout(k, s, {5}, {1}, iter);
  layouts[m] = iteration_layout(k, m, {1, 7}, {7, 1}, iter);
  Specialization row = specialize_layouts(k, layouts);
  EXPECT_EQ(row.buffers[m].index, kir::IndexKind::Affine);
  EXPECT_TRUE(row.buffers[m].r_contiguous);
  EXPECT_TRUE(specialized_kernel(k.kernel, row).buffers[m].r_contiguous);
  // Every other element of a wider row: affine, r's stride passed at run time, another variant.
  layouts[m] = iteration_layout(k, m, {1, 7}, {14, 2}, iter);
  Specialization every_other = specialize_layouts(k, layouts);
  EXPECT_EQ(every_other.buffers[m].index, kir::IndexKind::Affine);
  EXPECT_FALSE(every_other.buffers[m].r_contiguous);
  EXPECT_FALSE(specialized_kernel(k.kernel, every_other).buffers[m].r_contiguous);
  EXPECT_NE(row.layout_key, every_other.layout_key);
}

// sum(x * w, dim) with w broadcast against x, every buffer contiguous in its own shape.
struct WeightedSum {
  WeightedSum(const Sizes& x_shape, const Sizes& w_shape, int dim) {
    auto shape = [](const Sizes& s) {
      std::string out;
      for (int64_t d : s) out += (out.empty() ? "" : ", ") + std::to_string(d);
      return "[" + out + "]";
    };
    k = lower_model("  x: {shape: " + shape(x_shape) + "}\n  w: {shape: " + shape(w_shape) + "}\n",
                    "  - {id: a, op: mul, args: [x, w]}\n  - {id: s, op: sum, args: [a], dim: " + std::to_string(dim) + "}\n",
                    "[s]");
    iter = x_shape;
    x = buffer(k, "x"), w = buffer(k, "w"), s = buffer(k, "s");
    Sizes s_shape = x_shape;
    s_shape.erase(s_shape.begin() + dim);
    layouts.resize(3);
    layouts[x] = iteration_layout(k, x, x_shape, contiguous_strides(x_shape), iter);
    layouts[w] = iteration_layout(k, w, w_shape, contiguous_strides(w_shape), iter);
    layouts[s] = iteration_layout(k, s, s_shape, contiguous_strides(s_shape), iter);
  }
  static Sizes contiguous_strides(const Sizes& shape) {
    Sizes out(shape.size(), 1);
    for (size_t d = shape.size(); d-- > 1;) out[d - 1] = out[d] * shape[d];
    return out;
  }
  LoweredKernel k;
  Sizes iter;
  size_t x = 0, w = 0, s = 0;
  std::vector<BufferLayout> layouts;
};

TEST(Specialize, StridedRowsThatAreContiguousRuns) {
  // A [T, T] causal mask broadcast over H heads, read by a reduction over the last dim: strided
  // over o (h, t), but each row one contiguous run, so its kernel may load rows as vectors.
  WeightedSum ws({2, 3, 4}, {3, 4}, 2);
  const LoweredKernel& k = ws.k;
  std::vector<BufferLayout>& layouts = ws.layouts;
  const size_t m = ws.w;
  Specialization rows = specialize_layouts(k, layouts);
  EXPECT_EQ(rows.buffers[m].index, kir::IndexKind::Strided);
  EXPECT_TRUE(rows.buffers[m].r_contiguous);
  EXPECT_TRUE(specialized_kernel(k.kernel, rows).buffers[m].r_contiguous);
  // The mask transposed: its rows step by 4, a gather per element as before, another variant.
  layouts[m] = iteration_layout(k, m, {3, 4}, {1, 3}, ws.iter);
  Specialization transposed = specialize_layouts(k, layouts);
  EXPECT_EQ(transposed.buffers[m].index, kir::IndexKind::Strided);
  EXPECT_FALSE(transposed.buffers[m].r_contiguous);
  EXPECT_NE(rows.layout_key, transposed.layout_key);
}

TEST(Specialize, PerRowBuffersInKeepdimForm) {
  LoweredKernel k = lower_model("  x: {shape: [3, 4]}\n  c: {shape: [3, 1]}\n",
                                "  - {id: m, op: amax, args: [x], dim: 1, keepdim: true}\n"
                                "  - {id: y, op: sub, args: [m, c]}\n",
                                "[y]");
  size_t c = buffer(k, "c");
  BufferLayout cl = iteration_layout(k, c, {3, 1}, {1, 1}, {3, 4});
  EXPECT_EQ(cl.sizes, Sizes{3});
  EXPECT_EQ(cl.strides, Sizes{1});
  EXPECT_THROW(iteration_layout(k, c, {3, 2}, {2, 1}, {3, 4}), InternalError);
}

TEST(Specialize, IterationSizesFromBindings) {
  Model m = testing::load(testing::model_text("  x: {shape: [B, 4]}\n", "  - {id: y, op: neg, args: [x]}\n", "[y]",
                                              "dims: {B: [1, 8]}\n"));
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  LoweredKernel k = lower_group(m.graph, m.graph.body, plan.groups.at(0), "k");
  EXPECT_EQ(iteration_sizes(k, {{"B", 6}}), (Sizes{6, 4}));
  EXPECT_THROW(iteration_sizes(k, {}), InternalError);
}

TEST(Specialize, ReductionsOverOuterDimsWalkColumns) {
  // Sum over dim 0 of [5, 9]: o (9) steps by 1 through x, r by 9: the column schedule, one p.
  LoweredKernel k = lower_model("  x: {shape: [5, 9]}\n", "  - {id: s, op: sum, args: [x], dim: 0}\n", "[s]");
  Sizes iter = {5, 9};
  std::vector<BufferLayout> layouts = {iteration_layout(k, 0, {5, 9}, {9, 1}, iter), iteration_layout(k, 1, {9}, {1}, iter)};
  Specialization spec = specialize_layouts(k, layouts);
  EXPECT_EQ(spec.columns, 9);
  EXPECT_EQ(spec.buffers[0].col_step, 1);
  EXPECT_EQ(spec.buffers[1].col_step, -1);
  EXPECT_EQ(spec.layout_key, "A,C|q1-");
  kir::Kernel compiled = specialized_kernel(k.kernel, spec);
  EXPECT_TRUE(compiled.columns);
  EXPECT_EQ(compiled.buffers[0].col_step, 1);
  KernelArgs args(k, spec, {nullptr, nullptr}, iter, {});
  EXPECT_EQ(args.get()->cols, 9);
  // The same sum of the transposed tensor reads rows contiguously: no columns.
  layouts[0] = iteration_layout(k, 0, {5, 9}, {1, 5}, iter);
  spec = specialize_layouts(k, layouts);
  EXPECT_EQ(spec.columns, 0);
  EXPECT_EQ(spec.layout_key, "C,C");
  EXPECT_FALSE(specialized_kernel(k.kernel, spec).columns);
  EXPECT_EQ(KernelArgs(k, spec, {nullptr, nullptr}, iter, {}).get()->cols, 0);
  // Fewer than 8 columns stay rows.
  LoweredKernel narrow = lower_model("  x: {shape: [5, 7]}\n", "  - {id: s, op: sum, args: [x], dim: 0}\n", "[s]");
  EXPECT_EQ(specialize_layouts(narrow, {iteration_layout(narrow, 0, {5, 7}, {7, 1}, {5, 7}),
                                        iteration_layout(narrow, 1, {7}, {1}, {5, 7})}).columns, 0);
}

TEST(Specialize, MiddleDimReductionSplitsOIntoPAndColumns) {
  // A weighted sum over dim 1 of [2, 5, 9]: o = (b, c) does not merge, q = c (9 columns), p = b;
  // the [9] weight steps by 1 along q too (and by 0 along r).
  WeightedSum ws({2, 5, 9}, {9}, 1);
  const LoweredKernel& k = ws.k;
  std::vector<BufferLayout>& layouts = ws.layouts;
  const Sizes& iter = ws.iter;
  const size_t x = ws.x, w = ws.w;
  Specialization spec = specialize_layouts(k, layouts);
  EXPECT_EQ(spec.columns, 9);
  EXPECT_EQ(spec.buffers[x].col_step, 1);
  EXPECT_EQ(spec.buffers[w].col_step, 1);
  EXPECT_EQ(spec.buffers[x].index, kir::IndexKind::Strided);
  // x read with its channels every 5th element (a permuted tensor): q steps by 5, r by 1, rows.
  layouts[x] = iteration_layout(k, x, {2, 5, 9}, {45, 1, 5}, iter);
  EXPECT_EQ(specialize_layouts(k, layouts).columns, 0);
}

}  // namespace
}  // namespace gbc
