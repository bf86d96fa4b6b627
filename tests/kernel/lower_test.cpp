// Lowering (compiler/kernel/lower.h) and the kernel IR's text form (kernel_ir.h): print_kernel
// snapshots of lowered groups, ATen's promotion rules as explicit casts, accumulators per target,
// node tags, and how buffers map onto the iteration space.
#include <gtest/gtest.h>

#include <functional>

#include "compiler/kernel/kernel_ir.h"
#include "compiler/kernel/lower.h"
#include "tests/kernel/kernel_test_util.h"

namespace gbc {
namespace {

struct Lowered {
  Model model;
  LoweredKernel kernel;
};

// Lowers the only fusion group of a model.
Lowered lower_only_group(const std::string& inputs, const std::string& graph, const std::string& outputs,
                         const std::string& extra = "", LowerOptions options = {}) {
  Lowered l{testing::load(testing::model_text(inputs, graph, outputs, extra)), {}};
  PartitionPlan plan = partition_block(l.model.graph, l.model.graph.body);
  EXPECT_EQ(plan.groups.size(), 1u);
  l.kernel = lower_group(l.model.graph, l.model.graph.body, plan.groups.at(0), "k", options);
  return l;
}

// The single store's expression as text.
std::string stored(const Lowered& l) {
  EXPECT_EQ(l.kernel.kernel.stores.size(), 1u);
  return kir::print_expr(l.kernel.kernel.stores.at(0).value, l.kernel.kernel);
}

std::string lowered_expr(const std::string& inputs, const std::string& node) {
  return stored(lower_only_group(inputs, "  - {id: y, " + node + "}\n", "[y]"));
}

TEST(PrintKernel, DecomposedSoftmax) {
  Lowered l = lower_only_group("  x: {shape: [B, 16]}\n",
                               "  - {id: m, op: amax, args: [x], dim: -1, keepdim: true}\n"
                               "  - {id: s, op: sub, args: [x, m]}\n"
                               "  - {id: e, op: exp, args: [s]}\n"
                               "  - {id: t, op: sum, args: [e], dim: -1, keepdim: true}\n"
                               "  - {id: y, op: div, args: [e, t]}\n",
                               "[y]", "dims: {B: [1, 8]}\n");
  EXPECT_EQ(print_kernel(l.kernel.kernel),
            "kernel k reduction(o, r) {\n"
            "  in  x: float32 contiguous\n"
            "  out y: float32 contiguous\n"
            "  s0 = max over r (float32): load(x)\n"
            "  t0 = exp(sub(load(x), s0))\n"
            "  s1 = sum over r (float64): float64(t0)\n"
            "  y[o, r] = div(t0, float32(s1))\n"
            "}\n");
}

TEST(PrintKernel, PointwiseWithNumbersScalarsAndPerRowStores) {
  Lowered p = lower_only_group("  x: {shape: [4], dtype: int32}\n  t: {shape: []}\n",
                               "  - {id: s, op: item, args: [t]}\n"
                               "  - {id: a, op: mul, args: [x, 2.5]}\n"
                               "  - {id: y, op: clamp, args: [a], min: 0, max: 6}\n"
                               "  - {id: z, op: sub, args: [y, s]}\n",
                               "[y, z]");
  EXPECT_EQ(print_kernel(p.kernel.kernel),
            "kernel k pointwise(i) {\n"
            "  in  x: int32 contiguous\n"
            "  out y: float32 contiguous\n"
            "  out z: float32 contiguous\n"
            "  scalar0: float64\n"
            "  t0 = clamp(mul(float32(load(x)), 2.5), min=0.0, max=6.0)\n"
            "  y[i] = t0\n"
            "  z[i] = sub(t0, float32(scalar0))\n"
            "}\n");
  Lowered r = lower_only_group("  x: {shape: [4, 8], dtype: float16}\n  b: {shape: [4]}\n",
                               "  - {id: s, op: sum, args: [x], dim: 1}\n"
                               "  - {id: y, op: add, args: [s, b]}\n",
                               "[s, y]");
  EXPECT_EQ(print_kernel(r.kernel.kernel),
            "kernel k reduction(o, r) {\n"
            "  in  x: float16 contiguous\n"
            "  in  b: float32 contiguous per o\n"
            "  out s: float16 contiguous per o\n"
            "  out y: float32 contiguous per o\n"
            "  s0 = sum over r (float64): float64(load(x))\n"
            "  t0 = round_float16(float32(s0))\n"
            "  s[o] = t0\n"
            "  y[o] = add(t0, load(b))\n"
            "}\n");
}

TEST(PrintKernel, ConstantsNameTheirDtype) {
  kir::Kernel k;
  EXPECT_EQ(kir::print_expr(kir::constant(DType::Float64, 0.1), k), "float64(0.1)");
  EXPECT_EQ(kir::print_expr(kir::constant(DType::Float32, 0.1), k), "0.1");
  EXPECT_EQ(kir::print_expr(kir::constant(DType::Float32, 2.0), k), "2.0");
  EXPECT_EQ(kir::print_expr(kir::constant_int(DType::Int8, -3), k), "int8(-3)");
  EXPECT_EQ(kir::print_expr(kir::constant_int(DType::Int64, INT64_MIN), k), "-9223372036854775808");
  EXPECT_EQ(kir::print_expr(kir::constant_int(DType::Bool, 1), k), "true");
  EXPECT_EQ(kir::print_expr(kir::constant(DType::Float32, -INFINITY), k), "-inf");
  EXPECT_EQ(kir::print_expr(kir::constant(DType::Float64, NAN), k), "float64(nan)");
  EXPECT_EQ(kir::combine_name(kir::Combine::ArgMax), "argmax");
}

TEST(Lower, ArithmeticComputesInTheResultType) {
  std::string i32 = "  x: {shape: [4], dtype: int32}\n";
  EXPECT_EQ(lowered_expr(i32, "op: add, args: [x, 2.5]"), "add(float32(load(x)), 2.5)");
  EXPECT_EQ(lowered_expr(i32, "op: add, args: [x, 300]"), "add(load(x), int32(300))");
  EXPECT_EQ(lowered_expr(i32, "op: div, args: [x, 2]"), "div(float32(load(x)), 2.0)");
  EXPECT_EQ(lowered_expr("  x: {shape: [4], dtype: int8}\n", "op: add, args: [x, 300]"), "add(load(x), int8(44))");
  EXPECT_EQ(lowered_expr("  x: {shape: [4], dtype: bool}\n", "op: add, args: [x, true]"), "add(load(x), true)");
  EXPECT_EQ(lowered_expr("  x: {shape: [4], dtype: bool}\n", "op: add, args: [x, 2]"), "add(int64(load(x)), 2)");
  EXPECT_EQ(lowered_expr("  x: {shape: [4], dtype: float64}\n", "op: mul, args: [x, 0.1]"), "mul(load(x), float64(0.1))");
  // float16 * 0.1 multiplies by 0.1 rounded to float16, in float32.
  EXPECT_EQ(lowered_expr("  x: {shape: [4], dtype: float16}\n", "op: mul, args: [x, 0.1]"), "mul(load(x), 0.099975586)");
}

// Found by the fuzzer: bfloat16 0.0015488 + 0.5 is 0.5 in eager (0.50155 rounds down to the
// bfloat16 grid), so round() of it is 0; unrounded it was 0.50155 and round() gave 1.
TEST(Lower, HalfValuesAreRoundedAsEagerBeforeLaterMembersReadThem) {
  Lowered p = lower_only_group("  x: {shape: [4], dtype: bfloat16}\n",
                               "  - {id: a, op: add, args: [x, 0.5]}\n"
                               "  - {id: f, op: to, args: [a], dtype: float32}\n"
                               "  - {id: h, op: to, args: [a], dtype: float16}\n"
                               "  - {id: y, op: round, args: [f]}\n",
                               "[a, y, h]");
  EXPECT_EQ(print_kernel(p.kernel.kernel),
            "kernel k pointwise(i) {\n"
            "  in  x: bfloat16 contiguous\n"
            "  out a: bfloat16 contiguous\n"
            "  out h: float16 contiguous\n"
            "  out y: float32 contiguous\n"
            "  t0 = add(load(x), 0.5)\n"
            "  a[i] = t0\n"
            "  t1 = round_bfloat16(t0)\n"
            "  h[i] = round_float16(t1)\n"
            "  y[i] = round(float32(t1))\n"
            "}\n");
}

TEST(Lower, ComparisonsUseThePromotedCommonType) {
  EXPECT_EQ(lowered_expr("  a: {shape: [4], dtype: uint8}\n  b: {shape: [4], dtype: int8}\n", "op: lt, args: [a, b]"),
            "lt(int16(load(a)), int16(load(b)))");
  EXPECT_EQ(lowered_expr("  a: {shape: [4], dtype: int64}\n", "op: eq, args: [a, 0.5]"), "eq(float32(load(a)), 0.5)");
  EXPECT_EQ(lowered_expr("  a: {shape: [4], dtype: float16}\n  b: {shape: [], dtype: float64}\n", "op: ge, args: [a, b]"),
            "ge(load(a), round_float16(float32(load(b))))");
  EXPECT_EQ(lowered_expr("  a: {shape: [4], dtype: int32}\n", "op: logical_and, args: [a, true]"),
            "logical_and(load(a), int32(1))");
}

TEST(Lower, WhereClampCastAndPow) {
  EXPECT_EQ(lowered_expr("  c: {shape: [4], dtype: bool}\n  a: {shape: [4], dtype: int16}\n", "op: where, args: [c, a, 2.5]"),
            "where(load(c), float32(load(a)), 2.5)");
  EXPECT_EQ(lowered_expr("  x: {shape: [4], dtype: float16}\n", "op: clamp, args: [x], min: 0.1"),
            "clamp(load(x), min=0.0999755859375)");
  EXPECT_EQ(lowered_expr("  x: {shape: [4]}\n", "op: to, args: [x], dtype: bfloat16"), "round_bfloat16(load(x))");
  EXPECT_EQ(lowered_expr("  x: {shape: [4], dtype: float64}\n", "op: to, args: [x], dtype: int8"), "int8(load(x))");
  EXPECT_EQ(lowered_expr("  x: {shape: [4]}\n", "op: pow, args: [x, 2]"), "mul(load(x), load(x))");
  EXPECT_EQ(lowered_expr("  x: {shape: [4]}\n", "op: pow, args: [x, 0.5]"), "sqrt(load(x))");
  EXPECT_EQ(lowered_expr("  x: {shape: [4]}\n", "op: pow, args: [x, 0]"), "1.0");
  EXPECT_EQ(lowered_expr("  x: {shape: [4], dtype: float16}\n", "op: pow, args: [x, 0.5]"), "pow(load(x), 0.5)");
  EXPECT_EQ(lowered_expr("  x: {shape: [4], dtype: int32}\n", "op: pow, args: [x, 3]"), "pow(load(x), int32(3))");
  EXPECT_EQ(lowered_expr("  x: {shape: [4]}\n", "op: pow, args: [2, x]"), "pow(2.0, load(x))");
  EXPECT_EQ(lowered_expr("  x: {shape: [4]}\n", "op: gelu, args: [x], approximate: tanh"), "gelu_tanh(load(x))");
  EXPECT_EQ(lowered_expr("  x: {shape: [4], dtype: int8}\n", "op: exp, args: [x]"), "exp(float32(load(x)))");
}

TEST(Lower, AccumulatorsFollowTheTarget) {
  auto acc = [](const std::string& inputs, const std::string& node, LowerOptions::Target target) {
    LowerOptions options;
    options.target = target;
    Lowered l = lower_only_group(inputs, "  - {id: y, " + node + "}\n", "[y]", "", options);
    return std::string(dtype_name(l.kernel.kernel.stages.at(0).acc_dtype));
  };
  const auto cpu = LowerOptions::Target::Cpu, cuda = LowerOptions::Target::Cuda;
  EXPECT_EQ(acc("  x: {shape: [4]}\n", "op: sum, args: [x]", cpu), "float64");
  EXPECT_EQ(acc("  x: {shape: [4]}\n", "op: sum, args: [x]", cuda), "float32");
  EXPECT_EQ(acc("  x: {shape: [4], dtype: float16}\n", "op: prod, args: [x]", cuda), "float32");
  EXPECT_EQ(acc("  x: {shape: [4], dtype: float64}\n", "op: sum, args: [x]", cuda), "float64");
  EXPECT_EQ(acc("  x: {shape: [4], dtype: int8}\n", "op: sum, args: [x]", cuda), "int64");
  EXPECT_EQ(acc("  x: {shape: [4], dtype: bool}\n", "op: sum, args: [x]", cpu), "int64");
  EXPECT_EQ(acc("  x: {shape: [4], dtype: float16}\n", "op: amax, args: [x]", cpu), "float32");
  EXPECT_EQ(acc("  x: {shape: [4], dtype: int16}\n", "op: argmax, args: [x]", cpu), "int16");
}

TEST(Lower, MeanCountsSymbolicDimsAtRunTime) {
  Lowered fixed = lower_only_group("  x: {shape: [B, 8]}\n", "  - {id: y, op: mean, args: [x], dim: 1}\n", "[y]",
                                   "dims: {B: [1, 4]}\n");
  EXPECT_EQ(fixed.kernel.kernel.stages.size(), 1u);
  EXPECT_EQ(stored(fixed), "float32(div(s0, float64(8.0)))");
  Lowered symbolic = lower_only_group("  x: {shape: [B, 8]}\n", "  - {id: y, op: mean, args: [x], dim: 0}\n", "[y]",
                                      "dims: {B: [1, 4]}\n");
  ASSERT_EQ(symbolic.kernel.kernel.stages.size(), 2u);
  EXPECT_EQ(kir::print_expr(symbolic.kernel.kernel.stages[1].value, symbolic.kernel.kernel), "1");
  EXPECT_EQ(stored(symbolic), "float32(div(s0, float64(s1)))");
}

TEST(Lower, EveryExpressionIsTaggedWithItsNode) {
  Lowered l = lower_only_group("  x: {shape: [4, 8]}\n  w: {shape: [8]}\n",
                               "  - {id: s1, op: mean, args: [x], dim: -1, keepdim: true}\n"
                               "  - {id: d, op: sub, args: [x, s1]}\n"
                               "  - {id: v, op: var, args: [x], dim: -1, keepdim: true}\n"
                               "  - {id: r, op: rsqrt, args: [v]}\n"
                               "  - {id: n, op: mul, args: [d, r]}\n"
                               "  - {id: y, op: mul, args: [n, w]}\n",
                               "[y]");
  const kir::Kernel& k = l.kernel.kernel;
  ASSERT_EQ(k.node_names, (std::vector<std::string>{"s1", "d", "v", "r", "n", "y"}));
  ASSERT_EQ(k.node_values.size(), 6u);
  for (size_t n = 0; n < k.node_values.size(); ++n) EXPECT_EQ(k.node_values[n]->node, static_cast<int>(n)) << k.node_names[n];
  std::function<void(const kir::ExprPtr&)> check = [&](const kir::ExprPtr& e) {
    EXPECT_GE(e->node, 0) << kir::print_expr(e, k);
    EXPECT_LT(e->node, 6) << kir::print_expr(e, k);
    for (const auto& a : e->args) check(a);
  };
  for (const auto& s : k.stages) check(s.value);
  for (const auto& s : k.stores) check(s.value);
}

TEST(Lower, BuffersMapOntoTheIterationSpace) {
  // Full-level inputs broadcast right-aligned into [4, 6, 8] reduced over dim 1; per-row inputs
  // run along the kept dims [4, 8].
  Lowered l = lower_only_group("  x: {shape: [4, 6, 8]}\n  w: {shape: [8]}\n  b: {shape: [4, 8]}\n  c: {shape: [4, 1, 8]}\n",
                               "  - {id: a, op: mul, args: [x, w]}\n"
                               "  - {id: s, op: sum, args: [a], dim: 1}\n"
                               "  - {id: t, op: amax, args: [x], dim: 1, keepdim: true}\n"
                               "  - {id: y, op: add, args: [s, b]}\n"
                               "  - {id: z, op: add, args: [t, c]}\n",
                               "[y, z]");
  const LoweredKernel& k = l.kernel;
  EXPECT_EQ(k.reduced_dims, std::vector<int>{1});
  EXPECT_EQ(shape_str(k.iter_shape), "[4, 6, 8]");
  std::map<std::string, std::vector<int>> dims;
  for (size_t b = 0; b < k.kernel.buffers.size(); ++b) dims[k.kernel.buffers[b].name] = k.buffer_dims[b];
  EXPECT_EQ(dims["x"], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(dims["w"], std::vector<int>{2});
  EXPECT_EQ(dims["b"], (std::vector<int>{0, 2}));
  EXPECT_EQ(dims["c"], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(dims["y"], (std::vector<int>{0, 2}));
  EXPECT_EQ(dims["z"], (std::vector<int>{0, 1, 2}));
}

}  // namespace
}  // namespace gbc
