// upcast_fp64: every floating dtype becomes float64 (inputs, params, casts, constants, and results
// ATen would make float32 from integers); integer and bool values stay; a layer_norm's input is
// centered on its mean first.
#include "compiler/passes/upcast_fp64.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "compiler/aten/eager_executor.h"
#include "tests/passes/pass_test_util.h"

namespace gbc {
namespace {

using testing::graph_of;
using testing::ir;

TEST(UpcastFp64, EveryFloatingDtypeBecomesFloat64) {
  Graph g = graph_of(R"(dims: {B: [1, 4]}
inputs:
  x: {shape: [B, 3], dtype: float16}
  i: {shape: [B, 3], dtype: int32}
  m: {shape: [B, 3], dtype: bool}
params:
  w: {shape: [3, 2], dtype: bfloat16}
graph:
  - {id: c, op: full, shape: [3], value: 0.5}
  - {id: k, op: full, shape: [3], value: 2, dtype: float32}
  - {id: n, op: full, shape: [3], value: 2}
  - {id: xf, op: to, args: [x], dtype: float32}
  - {id: xi, op: to, args: [x], dtype: int16}
  - {id: wx, op: to, args: [w], dtype: float16}
  - {id: h, op: matmul, args: [x, wx]}
  - {id: e, op: exp, args: [i]}
  - {id: q, op: div, args: [i, n]}
  - {id: s, op: mul, args: [i, 2.5]}
  - {id: wh, op: where, args: [m, i, 0.5]}
  - {id: a, op: add, args: [xf, c]}
  - {id: ik, op: add, args: [i, n]}
  - {id: t, op: mul, args: [k, a]}
outputs: [h, e, q, s, wh, t, xi, ik]
)");
  EXPECT_EQ(ir(upcast_fp64(g)), R"(graph t(x: float64[B, 3], i: int32[B, 3], m: bool[B, 3], param w: float64[3, 2]) {
  c: float64[3] = full(dtype=float64, shape=[3], value=0.5)
  k: float64[3] = full(dtype=float64, shape=[3], value=2)
  n: int64[3] = full(shape=[3], value=2)
  xf: float64[B, 3] = to(x, dtype=float64)
  xi: int16[B, 3] = to(x, dtype=int16)
  wx.float16: float16[3, 2] = to(w, dtype=float16)
  wx: float64[3, 2] = to(wx.float16, dtype=float64)
  h: float64[B, 2] = matmul(x, wx)
  i.f64: float64[B, 3] = to(i, dtype=float64)
  e: float64[B, 3] = exp(i.f64)
  i.f64.1: float64[B, 3] = to(i, dtype=float64)
  n.f64: float64[3] = to(n, dtype=float64)
  q: float64[B, 3] = div(i.f64.1, n.f64)
  i.f64.2: float64[B, 3] = to(i, dtype=float64)
  s: float64[B, 3] = mul(i.f64.2, 2.5)
  i.f64.3: float64[B, 3] = to(i, dtype=float64)
  wh: float64[B, 3] = where(m, i.f64.3, 0.5)
  a: float64[B, 3] = add(xf, c)
  ik: int64[B, 3] = add(i, n)
  t: float64[B, 3] = mul(k, a)
  return h, e, q, s, wh, t, xi, ik
}
)");
}

// Found by the fuzzer (`gbc divergence fp64,tolerance [ceil,layer_norm]`, `[layer_norm,remainder]`):
// a one-element layer_norm row is exactly 0, but ATen's formula left a residue in the float64
// reference too, and ceil or remainder made that a whole number, blaming gbc's exact 0. The
// reference's layer_norm now sees its input centered (the same result), and gives 0 there.
TEST(UpcastFp64, LayerNormInputIsCenteredOnItsMean) {
  Graph g = graph_of(R"(inputs:
  x: {shape: [4, 3, 2]}
params:
  w: {shape: [3, 2]}
graph:
  - {id: y, op: layer_norm, args: [x, w], normalized_shape: [3, 2], eps: 0.001}
outputs: [y]
)");
  EXPECT_EQ(ir(upcast_fp64(g)), R"(graph t(x: float64[4, 3, 2], param w: float64[3, 2]) {
  x.ln_mean: float64[4, 1, 1] = mean(x, dim=[-2, -1], keepdim=true)
  x.ln_centered: float64[4, 3, 2] = sub(x, x.ln_mean)
  y: float64[4, 3, 2] = layer_norm(x.ln_centered, w, eps=0.001, normalized_shape=[3, 2])
  return y
}
)");
  Graph one = graph_of(R"(inputs:
  x: {shape: [6, 1], values: {dist: const, value: 0.37132260203361511}}
graph:
  - {id: n, op: layer_norm, args: [x], normalized_shape: [1], eps: 0.001}
  - {id: c, op: ceil, args: [n]}
  - {id: r, op: remainder, args: [n, 1.0]}
outputs: [c, r]
)");
  const at::Tensor x = at::full({6, 1}, 0.37132260203361511);
  const std::vector<at::Tensor> out = run_eager(upcast_fp64(one), {x.to(at::kDouble)});
  EXPECT_TRUE(at::equal(out[0], at::zeros({6, 1}, at::kDouble))) << out[0];
  EXPECT_TRUE(at::equal(out[1], at::zeros({6, 1}, at::kDouble))) << out[1];
}

// Found by the fuzzer (`gbc divergence fp64,tolerance [logsumexp,to]`, seed 6200789): a cast to
// bfloat16 rounds in eager and in gbc, and the reference skipped it: logsumexp of five bfloat16
// -1.609375 is 6.3e-5 (gbc's), but the reference's -3.0e-8 came from the unrounded float32
// -1.6094379, near eager's bfloat16 arithmetic's 0, and gbc failed the fp64 oracle. Casts to (and
// `full` of) float16 and bfloat16 now round in the reference too, then widen.
TEST(UpcastFp64, CastsToHalfFloatsRoundThenWiden) {
  Graph g = graph_of(R"(inputs:
  x: {shape: [1, 5, 1]}
graph:
  - {id: h, op: to, args: [x], dtype: bfloat16}
  - {id: l, op: logsumexp, args: [h]}
  - {id: c, op: full, shape: [2], value: 0.1, dtype: float16}
outputs: [l, c]
)");
  EXPECT_EQ(ir(upcast_fp64(g)), R"(graph t(x: float64[1, 5, 1]) {
  h.bfloat16: bfloat16[1, 5, 1] = to(x, dtype=bfloat16)
  h: float64[1, 5, 1] = to(h.bfloat16, dtype=float64)
  l: float64[] = logsumexp(h)
  c.float16: float16[2] = full(dtype=float16, shape=[2], value=0.10000000000000001)
  c: float64[2] = to(c.float16, dtype=float64)
  return l, c
}
)");
  const at::Tensor x = at::full({1, 5, 1}, -1.6094379425048828, at::kFloat);
  const std::vector<at::Tensor> out = run_eager(upcast_fp64(g), {x.to(at::kDouble)});
  EXPECT_NEAR(out[0].item<double>(), -1.609375 + std::log(5.0), 1e-15) << "the bfloat16 value's logsumexp";
  EXPECT_EQ(out[1][0].item<double>(), 0.0999755859375) << "0.1 in float16";
}

// Found by the fuzzer (`gbc divergence tolerance [lt]`, seed 5800350): lt(false, var(x)) of nine
// equal values. gbc's var is exactly 0; eager's float32 var and ATen's float64 var both left a
// residue, so the reference could not tell eager's rounding from a wrong kernel. The reference's
// var now sees its input centered twice (the same variance), and gives exactly 0 there.
TEST(UpcastFp64, VarInputIsCenteredTwiceOnItsMean) {
  Graph g = graph_of(R"(inputs:
  x: {shape: [4, 3]}
graph:
  - {id: v, op: var, args: [x], dim: [1], correction: 1}
outputs: [v]
)");
  EXPECT_EQ(ir(upcast_fp64(g)), R"(graph t(x: float64[4, 3]) {
  x.var_centered_mean: float64[4, 1] = mean(x, dim=[1], keepdim=true)
  x.var_centered: float64[4, 3] = sub(x, x.var_centered_mean)
  x.var_centered2_mean: float64[4, 1] = mean(x.var_centered, dim=[1], keepdim=true)
  x.var_centered2: float64[4, 3] = sub(x.var_centered, x.var_centered2_mean)
  v: float64[4] = var(x.var_centered2, correction=1, dim=[1])
  return v
}
)");
  Graph equal = graph_of(R"(inputs:
  x: {shape: [1, 3, 3]}
graph:
  - {id: e, op: expm1, args: [x]}
  - {id: v, op: var, args: [e]}
  - {id: s, op: var, args: [e], dim: [2], correction: 0}
outputs: [v, s]
)");
  const at::Tensor x = at::full({1, 3, 3}, 1.4142135381698608);
  ASSERT_GT(at::var(at::expm1(x.to(at::kDouble))).item<double>(), 0.0) << "ATen's own float64 var leaves the residue";
  const std::vector<at::Tensor> out = run_eager(upcast_fp64(equal), {x.to(at::kDouble)});
  EXPECT_EQ(out[0].item<double>(), 0.0);
  EXPECT_TRUE(at::equal(out[1], at::zeros({1, 3}, at::kDouble))) << out[1];
}

}  // namespace
// Found by the fuzzer (`gbc divergence tolerance []`, seed 6301338): to(batch_norm(x), int16) in
// bfloat16, where the batch_norm's value lies next to the midpoint between two bfloat16 values:
// eager and gbc round it to either side (0.99609375 and 1.0) before the cast, and the reference's
// exact value truncates to eager's. With cast_nudge the cast's input moves by the float32 tolerance
// and is rounded to bfloat16 again: the two graphs reach both results. A float32 value within
// rounding of a whole number reaches both neighbours too; integer casts of integers, and values far
// from a threshold, stay as they are.
TEST(UpcastFp64, CastNudgeBoundsTheIntegersRoundingOfTheCastsInputReaches) {
  Graph g = graph_of(R"(inputs:
  h: {shape: [3], dtype: bfloat16}
  f: {shape: [3]}
  i: {shape: [3], dtype: int32}
graph:
  - {id: a, op: to, args: [h], dtype: int16}
  - {id: b, op: to, args: [f], dtype: int32}
  - {id: c, op: to, args: [i], dtype: int64}
  - {id: fb, op: to, args: [f], dtype: bfloat16}
  - {id: d, op: to, args: [fb], dtype: int16}
outputs: [a, b, c, d]
)");
  const UpcastOptions down{-1, 1.3e-6, 1e-5, 1e-7, 1e-7}, up{+1, 1.3e-6, 1e-5, 1e-7, 1e-7};
  // 0.998046875 is the midpoint between bfloat16's 0.99609375 and 1.0; 2.999999 is within the
  // float32 tolerance of 3; 7.5 and 7.4 are far from any threshold.
  const std::vector<at::Tensor> in = {at::tensor({0.998046875, 7.5, -0.998046875}, at::kDouble),
                                      at::tensor({2.999999, 7.4, -2.999999}, at::kDouble), at::tensor({1, 2, 3}, at::kInt)};
  const std::vector<at::Tensor> exact = run_eager(upcast_fp64(g), in);
  const std::vector<at::Tensor> lo = run_eager(upcast_fp64(g, down), in);
  const std::vector<at::Tensor> hi = run_eager(upcast_fp64(g, up), in);
  EXPECT_TRUE(at::equal(exact[0], at::tensor({0, 7, 0}, at::kShort))) << exact[0];
  EXPECT_TRUE(at::equal(lo[0], at::tensor({0, 7, -1}, at::kShort))) << lo[0];
  EXPECT_TRUE(at::equal(hi[0], at::tensor({1, 7, 0}, at::kShort))) << hi[0];
  EXPECT_TRUE(at::equal(exact[1], at::tensor({2, 7, -2}, at::kInt))) << exact[1];
  EXPECT_TRUE(at::equal(lo[1], at::tensor({2, 7, -3}, at::kInt))) << lo[1];
  EXPECT_TRUE(at::equal(hi[1], at::tensor({3, 7, -2}, at::kInt))) << hi[1];
  for (const auto* out : {&exact, &lo, &hi}) EXPECT_TRUE(at::equal((*out)[2], at::tensor({1, 2, 3}, at::kLong)));
  // A cast to bfloat16 in the graph, then to int16: 2.999999 rounds to bfloat16's 3 either way.
  for (const auto* out : {&exact, &lo, &hi}) EXPECT_TRUE(at::equal((*out)[3], at::tensor({3, 7, -3}, at::kShort))) << (*out)[3];
  // Without a nudge the graph is the plain reference: no added nodes.
  EXPECT_EQ(ir(upcast_fp64(g, {})), ir(upcast_fp64(g)));
}

}  // namespace gbc
