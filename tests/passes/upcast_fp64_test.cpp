// upcast_fp64: every floating dtype becomes float64 (inputs, params, casts, constants, and results
// ATen would make float32 from integers); integer and bool values stay; a layer_norm's input is
// centered on its mean first.
#include "compiler/passes/upcast_fp64.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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
  // xf, a cast of float16 to float32 (a new tensor in eager), stays a new tensor between float64
  // values: x * 1, where `to` would return x itself. h, a float16 result, is rounded to float16 as
  // the program stores it.
  EXPECT_EQ(ir(upcast_fp64(g)), R"(graph t(x: float64[B, 3], i: int32[B, 3], m: bool[B, 3], param w: float64[3, 2]) {
  c: float64[3] = full(dtype=float64, shape=[3], value=0.5)
  k: float64[3] = full(dtype=float64, shape=[3], value=2)
  n: int64[3] = full(shape=[3], value=2)
  xf: float64[B, 3] = mul(x, 1.0)
  xi: int16[B, 3] = to(x, dtype=int16)
  wx.float16: float16[3, 2] = to(w, dtype=float16)
  wx: float64[3, 2] = to(wx.float16, dtype=float64)
  h.exact: float64[B, 2] = matmul(x, wx)
  h.float16: float16[B, 2] = to(h.exact, dtype=float16)
  h: float64[B, 2] = to(h.float16, dtype=float64)
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
TEST(UpcastFp64, LayerNormIsTheExactFormulaInTwoPasses) {
  Graph g = graph_of(R"(inputs:
  x: {shape: [4, 3, 2]}
params:
  w: {shape: [3, 2]}
graph:
  - {id: y, op: layer_norm, args: [x, w], normalized_shape: [3, 2], eps: 0.001}
outputs: [y]
)");
  EXPECT_EQ(ir(upcast_fp64(g)), R"(graph t(x: float64[4, 3, 2], param w: float64[3, 2]) {
  y.ln_mean: float64[4, 1, 1] = mean(x, dim=[-2, -1], keepdim=true)
  y.ln_centered: float64[4, 3, 2] = sub(x, y.ln_mean)
  y.ln_square: float64[4, 3, 2] = mul(y.ln_centered, y.ln_centered)
  y.ln_var: float64[4, 1, 1] = mean(y.ln_square, dim=[-2, -1], keepdim=true)
  y.ln_var_eps: float64[4, 1, 1] = add(y.ln_var, 0.001)
  y.ln_rstd: float64[4, 1, 1] = rsqrt(y.ln_var_eps)
  y.ln_normalized: float64[4, 3, 2] = mul(y.ln_centered, y.ln_rstd)
  y: float64[4, 3, 2] = mul(y.ln_normalized, w)
  return y
}
)");
  // The same values as ATen's layer_norm, weight and bias included.
  Graph affine = graph_of(R"(inputs:
  x: {shape: [5, 7], dtype: float64}
params:
  w: {shape: [7], dtype: float64}
  b: {shape: [7], dtype: float64}
graph:
  - {id: y, op: layer_norm, args: [x, w, b], normalized_shape: [7]}
outputs: [y]
)");
  const at::Tensor ax = at::randn({5, 7}, at::kDouble), aw = at::randn({7}, at::kDouble), ab = at::randn({7}, at::kDouble);
  const at::Tensor want = run_eager(affine, {ax, aw, ab})[0];
  EXPECT_TRUE(at::allclose(run_eager(upcast_fp64(affine), {ax, aw, ab})[0], want, 1e-12, 1e-12));
  // Found by the fuzzer (`gbc divergence tolerance [eq]`, seed 7501287): eq(0, layer_norm(x)) of a
  // float64 row [0, 0, 0, -1, 0, 1]. ATen's float64 Welford mean is -2.8e-17, so its zeros are
  // not 0, in eager and in a reference that ran ATen's kernel; gbc's (x - mean) * rstd is exact.
  Graph row = graph_of(R"(inputs:
  x: {shape: [1, 6], dtype: float64}
graph:
  - {id: n, op: layer_norm, args: [x], normalized_shape: [6]}
  - {id: z, op: eq, args: [n, 0.0]}
outputs: [z]
)");
  const at::Tensor rx = at::tensor({0.0, 0.0, 0.0, -1.0, 0.0, 1.0}, at::kDouble).reshape({1, 6});
  EXPECT_TRUE(at::equal(run_eager(upcast_fp64(row), {rx})[0], (rx == 0)));
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
// `full` of) float16 and bfloat16 now round in the reference too, then widen, as does every op's
// float16/bfloat16 result (seed 8301040: logsumexp(log_softmax) of three bfloat16 zeros).
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
  l.exact: float64[] = logsumexp(h)
  l.bfloat16: bfloat16[] = to(l.exact, dtype=bfloat16)
  l: float64[] = to(l.bfloat16, dtype=float64)
  c.float16: float16[2] = full(dtype=float16, shape=[2], value=0.10000000000000001)
  c: float64[2] = to(c.float16, dtype=float64)
  return l, c
}
)");
  const at::Tensor x = at::full({1, 5, 1}, -1.6094379425048828, at::kFloat);
  const std::vector<at::Tensor> out = run_eager(upcast_fp64(g), {x.to(at::kDouble)});
  const double stored = at::scalar_tensor(-1.609375 + std::log(5.0), at::kDouble).to(at::kBFloat16).item<double>();
  EXPECT_EQ(out[0].item<double>(), stored) << "the bfloat16 value's logsumexp, stored in bfloat16";
  EXPECT_EQ(out[1][0].item<double>(), 0.0999755859375) << "0.1 in float16";
}

// Two computed tensors (the original of seed 8103343: ge(mean(float16(v4)), v4 * v4), a float16
// against a bfloat16 value): the nudged references move one side by both sides' relative
// tolerance, so values within rounding of each other compare either way; values further apart,
// exact ties, and a value compared with itself compare as in the plain reference.
TEST(UpcastFp64, ThresholdNudgeMovesOneOfTwoComputedTensorsByBothTolerances) {
  Graph g = graph_of(R"(inputs:
  x: {shape: [3]}
graph:
  - {id: u, op: mul, args: [x, 1.0000001]}
  - {id: v, op: mul, args: [x, 1.0]}
  - {id: w, op: mul, args: [x, 1.001]}
  - {id: a, op: ge, args: [u, v]}
  - {id: b, op: ge, args: [w, v]}
  - {id: c, op: le, args: [u, u]}
  - {id: d, op: eq, args: [u, v]}
outputs: [a, b, c, d]
)");
  EXPECT_EQ(threshold_partner_arg(g, g.body.nodes[3]), std::optional<size_t>(1));
  EXPECT_EQ(thresholded_float_arg(g, g.body.nodes[5]), std::nullopt) << "le(u, u) is exact";
  const UpcastOptions down{-1, 1.3e-6, 1e-5, 1e-7, 1e-7}, up{+1, 1.3e-6, 1e-5, 1e-7, 1e-7};
  const std::vector<at::Tensor> in = {at::tensor({1.0, -2.0, 0.0}, at::kDouble)};
  auto bools = [](std::initializer_list<int> v) { return at::tensor(std::vector<int>(v), at::kInt).to(at::kBool); };
  const std::vector<at::Tensor> exact = run_eager(upcast_fp64(g), in);
  const std::vector<at::Tensor> lo = run_eager(upcast_fp64(g, down), in);
  const std::vector<at::Tensor> hi = run_eager(upcast_fp64(g, up), in);
  EXPECT_TRUE(at::equal(exact[0], bools({1, 0, 1}))) << exact[0];
  EXPECT_TRUE(at::equal(lo[0], bools({0, 0, 1}))) << "within rounding, and the tie at 0 kept: " << lo[0];
  EXPECT_TRUE(at::equal(hi[0], bools({1, 1, 1}))) << hi[0];
  for (const auto* r : {&exact, &lo, &hi}) {
    EXPECT_TRUE(at::equal((*r)[1], bools({1, 0, 1}))) << "0.1% apart: " << (*r)[1];
    EXPECT_TRUE(at::equal((*r)[2], bools({1, 1, 1}))) << (*r)[2];
  }
  EXPECT_TRUE(at::equal(exact[3], bools({0, 0, 1}))) << exact[3];
  EXPECT_TRUE(at::equal(lo[3], bools({1, 1, 1}))) << "the down reference puts u on v where rounding reaches it: " << lo[3];
  EXPECT_TRUE(at::equal(hi[3], bools({1, 1, 1}))) << "the up reference too, its other thresholds moved up: " << hi[3];
  // With slacks, each of the two comparisons of partners asks for eager's error at both sides.
  std::vector<ValueId> slack_of;
  UpcastOptions with_slack = down;
  with_slack.slack = &slack_of;
  const Graph nudged = upcast_fp64(g, with_slack);
  const ValueId u = g.body.nodes[0].output(), v = g.body.nodes[1].output(), w = g.body.nodes[2].output();
  EXPECT_EQ(slack_of, (std::vector<ValueId>{u, v, w, v, u, v})) << "ge(u, v), ge(w, v), eq(u, v)";
  EXPECT_EQ(nudged.inputs.size(), g.inputs.size() + slack_of.size());
}

// A float32 value within rounding of the midpoint between two float16 values rounds to either in
// eager and in the compiled path (seed 8201398: a batch_norm output 1e-7 apart, cast to float16
// and multiplied): the nudged references move the cast's input before it rounds, so they hold both
// roundings; values away from a midpoint round as in the plain reference.
TEST(UpcastFp64, ThresholdNudgeBracketsAHalfCastsMidpoint) {
  Graph g = graph_of(R"(inputs:
  x: {shape: [3]}
  h: {shape: [3], dtype: float16}
graph:
  - {id: a, op: to, args: [x], dtype: float16}
  - {id: y, op: mul, args: [a, x]}
  - {id: b, op: to, args: [h], dtype: bfloat16}
  - {id: w, op: to, args: [x], dtype: float64}
outputs: [y, b, w]
)");
  EXPECT_EQ(thresholded_float_arg(g, g.body.nodes[0]), std::optional<size_t>(0));
  EXPECT_EQ(thresholded_float_arg(g, g.body.nodes[2]), std::nullopt) << "float16 to bfloat16 is no float32 midpoint";
  EXPECT_EQ(thresholded_float_arg(g, g.body.nodes[3]), std::nullopt) << "a widening cast rounds nothing";
  const UpcastOptions down{-1, 1.3e-6, 1e-5, 1e-7, 1e-7}, up{+1, 1.3e-6, 1e-5, 1e-7, 1e-7};
  const double midpoint = 1.00048828125;  // between float16's 1 and 1.0009765625
  const std::vector<at::Tensor> in = {at::tensor({midpoint + 1e-7, 1.25, -midpoint + 2e-7}, at::kDouble),
                                      at::tensor({0.5, 1.0, 2.0}, at::kDouble)};
  auto halves = [&](const UpcastOptions& o) { return (run_eager(upcast_fp64(g, o), in)[0] / in[0]).to(at::kFloat); };
  const at::Tensor exact = (run_eager(upcast_fp64(g), in)[0] / in[0]).to(at::kFloat);
  EXPECT_TRUE(at::equal(exact, at::tensor({1.0009765625f, 1.25f, -1.0f}))) << exact;
  EXPECT_TRUE(at::equal(halves(down), at::tensor({1.0f, 1.25f, -1.0009765625f}))) << halves(down);
  EXPECT_TRUE(at::equal(halves(up), at::tensor({1.0009765625f, 1.25f, -1.0f}))) << halves(up);
}

// Every op's float16/bfloat16 result is stored rounded, in eager and in gbc: the reference rounds
// it too (seed 8301040: log_softmax of three bfloat16 zeros is -1.1015625 as stored, and the
// logsumexp of that is -0.0029; eager's own roundings cancelled to 0, and gbc's -0.0029 was
// blamed). Views keep their aliasing and round nothing.
TEST(UpcastFp64, HalfResultsAreStoredRounded) {
  Graph g = graph_of(R"(inputs:
  v0: {shape: [3, 1], dtype: bfloat16}
graph:
  - {id: v1, op: log_softmax, args: [v0], dim: 0}
  - {id: t, op: transpose, args: [v1], dim0: 0, dim1: 1}
  - {id: v2, op: logsumexp, args: [t]}
outputs: [v2, t]
)");
  const Graph up = upcast_fp64(g);
  const std::string text = ir(up);
  EXPECT_NE(text.find("v1.bfloat16: bfloat16[3, 1] = to(v1.exact, dtype=bfloat16)"), std::string::npos) << text;
  EXPECT_NE(text.find("t: float64[1, 3] = transpose(v1"), std::string::npos) << "a view rounds nothing: " << text;
  const std::vector<at::Tensor> out = run_eager(up, {at::zeros({3, 1}, at::kDouble)});
  EXPECT_EQ(out[1][0][0].item<double>(), -1.1015625) << "-log(3) as bfloat16 stores it";
  const double stored = at::scalar_tensor(std::log(3.0) - 1.1015625, at::kDouble).to(at::kBFloat16).item<double>();
  EXPECT_EQ(out[0].item<double>(), stored);
  EXPECT_LT(out[0].item<double>(), -0.0029);
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

// Found by the fuzzer (`gbc divergence tolerance []`, seeds 6301338 and 7400100): to(batch_norm(x),
// int16) in bfloat16, where the batch_norm's value lies at the midpoint between two bfloat16 values:
// eager and gbc round it to either side (0.99609375 and 1.0) before the cast, and the reference's
// exact value truncates to eager's. With threshold_nudge the cast's input moves by the float32
// tolerance and is rounded to bfloat16 again: the two graphs reach both results. A float32 value
// within rounding of a whole number reaches both neighbours too, as does one under floor or a
// comparison with a number (seed 7401242: gt of a sum that is exactly 0); integer casts of
// integers, comparisons of two tensors, and values far from a threshold stay as they are.
TEST(UpcastFp64, ThresholdNudgeBoundsWhatRoundingAtAThresholdDecides) {
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
  - {id: fl, op: floor, args: [f]}
  - {id: z, op: sub, args: [f, f]}
  - {id: gz, op: gt, args: [z, 0]}
  - {id: le, op: le, args: [f, f]}
outputs: [a, b, c, d, fl, gz, le]
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
  EXPECT_TRUE(at::equal(exact[4], at::tensor({2.0, 7.0, -3.0}, at::kDouble))) << exact[4];
  EXPECT_TRUE(at::equal(hi[4], at::tensor({3.0, 7.0, -3.0}, at::kDouble))) << hi[4];
  EXPECT_TRUE(at::equal(lo[4], at::tensor({2.0, 7.0, -4.0}, at::kDouble))) << lo[4];
  EXPECT_TRUE(at::equal(lo[5], at::zeros({3}, at::kBool))) << lo[5];
  EXPECT_TRUE(at::equal(hi[5], at::ones({3}, at::kBool))) << hi[5];
  for (const auto* out : {&exact, &lo, &hi}) EXPECT_TRUE(at::equal((*out)[6], at::ones({3}, at::kBool))) << "le(f, f)";
  // Which operand is thresholded: the float tensor of a remainder with an integer or of a
  // comparison with an integer tensor (its values are exact: seed 8401002), nothing for a
  // remainder of two float tensors or two integers.
  Graph r = graph_of(R"(inputs:
  f: {shape: [3]}
  i: {shape: [3], dtype: int32}
graph:
  - {id: a, op: remainder, args: [i, f]}
  - {id: b, op: remainder, args: [f, f]}
  - {id: c, op: remainder, args: [i, i]}
  - {id: d, op: lt, args: [f, i]}
outputs: [a, b, c, d]
)");
  EXPECT_EQ(thresholded_float_arg(r, r.body.nodes[0]), std::optional<size_t>(1));
  for (size_t k = 1; k < 3; ++k) EXPECT_EQ(thresholded_float_arg(r, r.body.nodes[k]), std::nullopt) << k;
  EXPECT_EQ(thresholded_float_arg(r, r.body.nodes[3]), std::optional<size_t>(0));
  // Without a nudge the graph is the plain reference: no added nodes.
  EXPECT_EQ(ir(upcast_fp64(g, {})), ir(upcast_fp64(g)));
}

// Equality with a number (seed 8003809): a bfloat16 silu of 0.416015625 is 0.2506617 exactly,
// which rounds onto bfloat16's 0.25 (gbc) or, after eager's own rounding, next to it; a float32
// value within its tolerance of 3. The down graph puts the value on the number where rounding
// within the tolerance reaches it; values far from it stay.
TEST(UpcastFp64, ThresholdNudgePutsAValueOnTheNumberItIsComparedWith) {
  Graph g = graph_of(R"(inputs:
  h: {shape: [2], dtype: bfloat16}
  f: {shape: [3]}
graph:
  - {id: s, op: silu, args: [h]}
  - {id: a, op: eq, args: [s, 0.25]}
  - {id: b, op: ne, args: [f, 3]}
outputs: [a, b]
)");
  EXPECT_EQ(thresholded_float_arg(g, g.body.nodes[1]), std::optional<size_t>(0));
  const UpcastOptions down{-1, 1.3e-6, 1e-5, 1e-7, 1e-7}, up{+1, 1.3e-6, 1e-5, 1e-7, 1e-7};
  const std::vector<at::Tensor> in = {at::tensor({0.416015625, 0.5}, at::kDouble), at::tensor({2.999999, 3.5, 3.0}, at::kDouble)};
  auto bools = [](std::initializer_list<int> v) { return at::tensor(std::vector<int>(v), at::kInt).to(at::kBool); };
  const std::vector<at::Tensor> exact = run_eager(upcast_fp64(g), in);
  const std::vector<at::Tensor> lo = run_eager(upcast_fp64(g, down), in);
  const std::vector<at::Tensor> hi = run_eager(upcast_fp64(g, up), in);
  EXPECT_TRUE(at::equal(exact[0], bools({1, 0}))) << "silu's 0.2506617, stored in bfloat16, is 0.25: " << exact[0];
  EXPECT_TRUE(at::equal(lo[0], bools({1, 0}))) << lo[0];
  EXPECT_TRUE(at::equal(exact[1], bools({1, 1, 0}))) << exact[1];
  EXPECT_TRUE(at::equal(lo[1], bools({0, 1, 0}))) << lo[1];
  EXPECT_TRUE(at::equal(hi[1], bools({1, 1, 1}))) << hi[1];
}

// An argmax over values within rounding of one another (the eleventh campaign's seed 7502010: rows
// that normalize to the same value in exact arithmetic): the nudged references take the first
// (down) and the last (up) index within the tolerance of the maximum, the plain one the exact
// maximum; a row with NaN keeps its first NaN, an infinite maximum its ties, the flattened form
// (no dim) and keepdim their shapes, and a bfloat16 input its own dtype's tolerance.
TEST(UpcastFp64, NudgedReferencesBreakAnArgmaxNearTieBothWays) {
  Graph g = graph_of(R"(inputs:
  x: {shape: [3, 4]}
  f: {shape: [2, 2], dtype: float64}
  h: {shape: [4], dtype: bfloat16}
graph:
  - {id: a, op: argmax, args: [x], dim: 1}
  - {id: k, op: argmax, args: [x], dim: 1, keepdim: true}
  - {id: b, op: argmax, args: [f]}
  - {id: c, op: argmax, args: [h], dim: 0}
outputs: [a, k, b, c]
)");
  EXPECT_TRUE(near_tie_argmax(g, g.body.nodes[0]));
  const UpcastOptions down{-1, 1.3e-6, 1e-5, 1e-7, 1e-7, 1e-3, 1e-5, 1.6e-2, 1e-5};
  UpcastOptions up = down;
  up.threshold_nudge = +1;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<at::Tensor> in = {
      at::tensor({1.0, 2.0, 2.0000001, 0.0, 5.0, nan, 5.0, nan, inf, 3.0, inf, 1.0}, at::kDouble).reshape({3, 4}),
      at::tensor({1.0, 3.0, 3.0, 2.0}, at::kDouble).reshape({2, 2}), at::tensor({1.0, 1.0078125, 0.5, 1.0}, at::kDouble)};
  const std::vector<at::Tensor> exact = run_eager(upcast_fp64(g), in);
  const std::vector<at::Tensor> lo = run_eager(upcast_fp64(g, down), in);
  const std::vector<at::Tensor> hi = run_eager(upcast_fp64(g, up), in);
  EXPECT_TRUE(at::equal(exact[0], at::tensor({2, 1, 0}, at::kLong))) << exact[0];
  EXPECT_TRUE(at::equal(lo[0], at::tensor({1, 1, 0}, at::kLong))) << lo[0];
  EXPECT_TRUE(at::equal(hi[0], at::tensor({2, 1, 2}, at::kLong))) << hi[0];
  EXPECT_TRUE(at::equal(lo[1], at::tensor({1, 1, 0}, at::kLong).reshape({3, 1}))) << lo[1];
  EXPECT_TRUE(at::equal(hi[1], at::tensor({2, 1, 2}, at::kLong).reshape({3, 1}))) << hi[1];
  EXPECT_EQ(exact[2].item<int64_t>(), 1);
  EXPECT_EQ(lo[2].item<int64_t>(), 1);
  EXPECT_EQ(hi[2].item<int64_t>(), 2);
  EXPECT_EQ(hi[2].dim(), 0);
  EXPECT_EQ(exact[3].item<int64_t>(), 1);
  EXPECT_EQ(lo[3].item<int64_t>(), 0);
  EXPECT_EQ(hi[3].item<int64_t>(), 3);
  // Over the flattened values of a symbolic shape (seed 8103639) the positions' type cannot be
  // written in the model's sizes: the up graph takes the first near index too.
  Graph s = graph_of(R"(dims: {B: [1, 4], N: [1, 4]}
inputs:
  x: {shape: [B, N]}
graph:
  - {id: a, op: argmax, args: [x]}
outputs: [a]
)");
  const std::vector<at::Tensor> sx = {at::tensor({1.0, 3.0, 3.0, 2.0}, at::kDouble).reshape({2, 2})};
  EXPECT_EQ(run_eager(upcast_fp64(s, up), sx)[0].item<int64_t>(), 1);
  EXPECT_EQ(run_eager(upcast_fp64(s, down), sx)[0].item<int64_t>(), 1);
}


// A comparison with a graph input the other side does not depend on (a threshold passed as a
// tensor: seed 8103343, ge(mean(float16(...)), t) with t = 6.1e-05) thresholds the computed side;
// a comparison with a value it is computed from is one of two partners (below).
TEST(UpcastFp64, ThresholdNudgeMovesAComputedValueComparedWithAnIndependentInput) {
  Graph g = graph_of(R"(inputs:
  f: {shape: [3]}
  t: {shape: [1]}
graph:
  - {id: d, op: mul, args: [f, 2.0]}
  - {id: a, op: ge, args: [d, t]}
  - {id: b, op: ge, args: [d, f]}
  - {id: c, op: lt, args: [t, d]}
outputs: [a, b, c]
)");
  EXPECT_EQ(thresholded_float_arg(g, g.body.nodes[1]), std::optional<size_t>(0));
  EXPECT_EQ(thresholded_float_arg(g, g.body.nodes[2]), std::optional<size_t>(0)) << "two other tensors: partners";
  EXPECT_EQ(threshold_partner_arg(g, g.body.nodes[2]), std::optional<size_t>(1));
  EXPECT_EQ(threshold_partner_arg(g, g.body.nodes[1]), std::nullopt) << "an independent input is no partner";
  EXPECT_EQ(thresholded_float_arg(g, g.body.nodes[3]), std::optional<size_t>(1));
  const UpcastOptions up{+1, 1.3e-6, 1e-5, 1e-7, 1e-7};
  const std::vector<at::Tensor> in = {at::tensor({1.4999999, 1.0, 2.0}, at::kDouble), at::tensor({3.0}, at::kDouble)};
  const std::vector<at::Tensor> exact = run_eager(upcast_fp64(g), in);
  const std::vector<at::Tensor> hi = run_eager(upcast_fp64(g, up), in);
  auto bools = [](std::initializer_list<int> v) { return at::tensor(std::vector<int>(v), at::kInt).to(at::kBool); };
  EXPECT_TRUE(at::equal(exact[0], bools({0, 0, 1}))) << exact[0];
  EXPECT_TRUE(at::equal(hi[0], bools({1, 0, 1}))) << hi[0];
}

// With slack inputs, a thresholded value moves by max(its tolerance, the slack the caller passes:
// eager's own error there), so bfloat16 noise far above the float32 tolerance bounds what
// rounding decides (seed 8103343, reduced).
TEST(UpcastFp64, ThresholdNudgeMovesByEagersOwnErrorWhereLarger) {
  Graph g = graph_of(R"(inputs:
  f: {shape: [2]}
graph:
  - {id: d, op: mul, args: [f, 2.0]}
  - {id: a, op: gt, args: [d, 1.0]}
outputs: [a]
)");
  std::vector<ValueId> slack_of;
  UpcastOptions up{+1, 1.3e-6, 1e-5, 1e-7, 1e-7};
  up.slack = &slack_of;
  const Graph nudged = upcast_fp64(g, up);
  ASSERT_EQ(slack_of, (std::vector<ValueId>{*g.find_value("d")}));
  ASSERT_EQ(nudged.inputs.size(), g.inputs.size() + 1);
  const at::Tensor f = at::tensor({0.45, 0.2}, at::kDouble);
  auto bools = [](std::initializer_list<int> v) { return at::tensor(std::vector<int>(v), at::kInt).to(at::kBool); };
  // d = 0.9: the float32 tolerance does not reach 1, a slack of 0.15 does; 0.4 is beyond both.
  EXPECT_TRUE(at::equal(run_eager(nudged, {f, at::scalar_tensor(0.0, at::kDouble)})[0], bools({0, 0})));
  EXPECT_TRUE(at::equal(run_eager(nudged, {f, at::scalar_tensor(0.15, at::kDouble)})[0], bools({1, 0})));
}

// A cast that changes a float's dtype is a new tensor in eager; between float64 values it stays
// one (x * 1), so an in-place write through it does not reach the input in the reference alone.
// A cast to the dtype a value has returns the value in eager and in the reference alike.
TEST(UpcastFp64, ACastStaysANewTensorAndASameDtypeCastTheValueItself) {
  Graph g = graph_of(R"(inputs:
  x: {shape: [3]}
  y: {shape: [3]}
graph:
  - {id: w, op: to, args: [x], dtype: float64}
  - {op: add_, args: [w, 1.0]}
  - {id: s, op: to, args: [y], dtype: float32}
  - {op: add_, args: [s, 1.0]}
outputs: [w, s]
)");
  std::vector<at::Tensor> in = {at::tensor({1.0, -0.0, 3.0}, at::kDouble), at::tensor({1.0, 2.0, 3.0}, at::kDouble)};
  const std::vector<at::Tensor> out = run_eager(upcast_fp64(g), in);
  EXPECT_TRUE(at::equal(in[0], at::tensor({1.0, -0.0, 3.0}, at::kDouble))) << in[0];
  EXPECT_TRUE(at::equal(out[0], at::tensor({2.0, 1.0, 4.0}, at::kDouble))) << out[0];
  EXPECT_TRUE(at::equal(in[1], at::tensor({2.0, 3.0, 4.0}, at::kDouble))) << in[1];
}

// Found by the fuzzer again (`gbc divergence nan_inf [log1p]`, seed 7503268): LibTorch 1.13's
// float64 log1p of 1.43e308 is inf, and the reference that ran it could not tell eager's inf from
// gbc's exact 709.6. The reference takes log(x) above 1e300, where the two are equal.
TEST(UpcastFp64, Log1pOfHugeFloat64ValuesIsFinite) {
  Graph g = graph_of(R"(inputs:
  x: {shape: [4], dtype: float64}
graph:
  - {id: y, op: log1p, args: [x]}
outputs: [y]
)");
  const double inf = std::numeric_limits<double>::infinity();
  const at::Tensor x = at::tensor({1.4346235585632104e+308, 0.5, inf, -0.25}, at::kDouble);
  const at::Tensor y = run_eager(upcast_fp64(g), {x})[0];
  EXPECT_EQ(y[0].item<double>(), std::log(1.4346235585632104e+308));
  EXPECT_EQ(y[1].item<double>(), std::log1p(0.5));
  EXPECT_EQ(y[2].item<double>(), inf);
  EXPECT_EQ(y[3].item<double>(), std::log1p(-0.25));
}

}  // namespace
}  // namespace gbc
