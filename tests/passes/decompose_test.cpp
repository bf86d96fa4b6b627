// decompose: the exact primitives each composite becomes (names, attributes, float32 compute for
// half types) and the composites it must leave whole. Numerical agreement with ATen is checked by
// pipeline_semantics_test.cpp.
#include "compiler/passes/decompose.h"

#include <gtest/gtest.h>

#include "tests/passes/pass_test_util.h"

namespace gbc {
namespace {

using testing::graph_of;
using testing::ir;

TEST(Decompose, SoftmaxIsMaxShiftExpSumTimesReciprocal) {
  Graph g = graph_of(R"(dims: {B: [1, 4]}
inputs: {x: {shape: [B, 5], dtype: float32}}
graph:
  - {id: y, op: softmax, args: [x], dim: -1}
outputs: [y]
)");
  EXPECT_EQ(ir(decompose(g)), R"(graph t(x: float32[B, 5]) {
  y.max: float32[B, 1] = amax(x, dim=-1, keepdim=true)
  y.shifted: float32[B, 5] = sub(x, y.max)
  y.exp: float32[B, 5] = exp(y.shifted)
  y.sum: float32[B, 1] = sum(y.exp, dim=-1, keepdim=true)
  y.inv_sum: float32[B, 1] = reciprocal(y.sum)
  y: float32[B, 5] = mul(y.exp, y.inv_sum)
  return y
}
)");
}

TEST(Decompose, LogSoftmaxOfBfloat16ComputesInFloat32) {
  Graph g = graph_of(R"(dims: {B: [1, 4]}
inputs: {h: {shape: [B, 5], dtype: bfloat16}}
graph:
  - {id: z, op: log_softmax, args: [h], dim: 0}
outputs: [z]
)");
  EXPECT_EQ(ir(decompose(g)), R"(graph t(h: bfloat16[B, 5]) {
  h.f32: float32[B, 5] = to(h, dtype=float32)
  z.max: float32[1, 5] = amax(h.f32, dim=0, keepdim=true)
  z.shifted: float32[B, 5] = sub(h.f32, z.max)
  z.exp: float32[B, 5] = exp(z.shifted)
  z.sum: float32[1, 5] = sum(z.exp, dim=0, keepdim=true)
  z.logsum: float32[1, 5] = log(z.sum)
  z.f32: float32[B, 5] = sub(z.shifted, z.logsum)
  z: bfloat16[B, 5] = to(z.f32, dtype=bfloat16)
  return z
}
)");
}

TEST(Decompose, LogsumexpMasksInfiniteMaximaAsAten) {
  Graph g = graph_of(R"(dims: {B: [1, 4]}
inputs: {x: {shape: [B, 3, 4], dtype: float32}}
graph:
  - {id: lse, op: logsumexp, args: [x], dim: [1, -1]}
  - {id: all, op: logsumexp, args: [x], keepdim: true}
outputs: [lse, all]
)");
  EXPECT_EQ(ir(decompose(g)), R"(graph t(x: float32[B, 3, 4]) {
  lse.max: float32[B, 1, 1] = amax(x, dim=[1, -1], keepdim=true)
  lse.max_abs: float32[B, 1, 1] = abs(lse.max)
  lse.max_is_inf: bool[B, 1, 1] = eq(lse.max_abs, inf)
  lse.safe_max: float32[B, 1, 1] = where(lse.max_is_inf, 0.0, lse.max)
  lse.shifted: float32[B, 3, 4] = sub(x, lse.safe_max)
  lse.exp: float32[B, 3, 4] = exp(lse.shifted)
  lse.sum: float32[B] = sum(lse.exp, dim=[1, -1], keepdim=false)
  lse.log: float32[B] = log(lse.sum)
  lse.max_out: float32[B] = amax(x, dim=[1, -1], keepdim=false)
  lse.max_out_abs: float32[B] = abs(lse.max_out)
  lse.max_out_is_inf: bool[B] = eq(lse.max_out_abs, inf)
  lse.safe_max_out: float32[B] = where(lse.max_out_is_inf, 0.0, lse.max_out)
  lse: float32[B] = add(lse.log, lse.safe_max_out)
  all.max: float32[1, 1, 1] = amax(x, keepdim=true)
  all.max_abs: float32[1, 1, 1] = abs(all.max)
  all.max_is_inf: bool[1, 1, 1] = eq(all.max_abs, inf)
  all.safe_max: float32[1, 1, 1] = where(all.max_is_inf, 0.0, all.max)
  all.shifted: float32[B, 3, 4] = sub(x, all.safe_max)
  all.exp: float32[B, 3, 4] = exp(all.shifted)
  all.sum: float32[1, 1, 1] = sum(all.exp, keepdim=true)
  all.log: float32[1, 1, 1] = log(all.sum)
  all: float32[1, 1, 1] = add(all.log, all.safe_max)
  return lse, all
}
)");
}

TEST(Decompose, LayerNormWithAndWithoutAffineParams) {
  Graph g = graph_of(R"(dims: {B: [1, 4]}
inputs: {x: {shape: [B, 3, 4], dtype: float32}}
params:
  w: {shape: [4], dtype: float32}
  b: {shape: [4], dtype: float32}
graph:
  - {id: ln, op: layer_norm, args: [x, w, b], normalized_shape: [4], eps: 1.0e-5}
  - {id: plain, op: layer_norm, args: [x], normalized_shape: [3, 4], eps: 0.5}
outputs: [ln, plain]
)");
  // The means are decomposed again (sum / N: the normalized dims are static), a float32 mean as
  // the float64 sum divided in float64 and rounded once (a constant row's mean is its value); the
  // squares, the variance and rstd are float64, so deviations above 1.8e19 do not overflow.
  EXPECT_EQ(ir(decompose(g)), R"(graph t(x: float32[B, 3, 4], param w: float32[4], param b: float32[4]) {
  ln.x_f64: float64[B, 3, 4] = to(x, dtype=float64)
  ln.mean_f64.sum: float64[B, 3, 1] = sum(ln.x_f64, dim=[-1], keepdim=true)
  ln.mean_f64: float64[B, 3, 1] = div(ln.mean_f64.sum, 4)
  ln.mean: float32[B, 3, 1] = to(ln.mean_f64, dtype=float32)
  ln.centered: float32[B, 3, 4] = sub(x, ln.mean)
  ln.centered_f64: float64[B, 3, 4] = to(ln.centered, dtype=float64)
  ln.sq: float64[B, 3, 4] = mul(ln.centered_f64, ln.centered_f64)
  ln.var.sum: float64[B, 3, 1] = sum(ln.sq, dim=[-1], keepdim=true)
  ln.var: float64[B, 3, 1] = div(ln.var.sum, 4)
  ln.var_eps: float64[B, 3, 1] = add(ln.var, 1.0000000000000001e-05)
  ln.rstd_f64: float64[B, 3, 1] = rsqrt(ln.var_eps)
  ln.rstd: float32[B, 3, 1] = to(ln.rstd_f64, dtype=float32)
  ln.norm: float32[B, 3, 4] = mul(ln.centered, ln.rstd)
  ln.scaled: float32[B, 3, 4] = mul(ln.norm, w)
  ln: float32[B, 3, 4] = add(ln.scaled, b)
  plain.x_f64: float64[B, 3, 4] = to(x, dtype=float64)
  plain.mean_f64.sum: float64[B, 1, 1] = sum(plain.x_f64, dim=[-2, -1], keepdim=true)
  plain.mean_f64: float64[B, 1, 1] = div(plain.mean_f64.sum, 12)
  plain.mean: float32[B, 1, 1] = to(plain.mean_f64, dtype=float32)
  plain.centered: float32[B, 3, 4] = sub(x, plain.mean)
  plain.centered_f64: float64[B, 3, 4] = to(plain.centered, dtype=float64)
  plain.sq: float64[B, 3, 4] = mul(plain.centered_f64, plain.centered_f64)
  plain.var.sum: float64[B, 1, 1] = sum(plain.sq, dim=[-2, -1], keepdim=true)
  plain.var: float64[B, 1, 1] = div(plain.var.sum, 12)
  plain.var_eps: float64[B, 1, 1] = add(plain.var, 0.5)
  plain.rstd_f64: float64[B, 1, 1] = rsqrt(plain.var_eps)
  plain.rstd: float32[B, 1, 1] = to(plain.rstd_f64, dtype=float32)
  plain: float32[B, 3, 4] = mul(plain.centered, plain.rstd)
  return ln, plain
}
)");
}

TEST(Decompose, VarDividesByCountMinusCorrectionClampedAtZero) {
  Graph g = graph_of(R"(dims: {B: [1, 4]}
inputs: {x: {shape: [B, 3], dtype: float32}}
graph:
  - {id: v, op: var, args: [x], dim: 1, correction: 0}
  - {id: w, op: var, args: [x], dim: -1, correction: 5, keepdim: true}
outputs: [v, w]
)");
  // correction 5 > N = 3: ATen divides by max(N - correction, 0) = 0. In float64, shifted by
  // each row's first element (values near the float32 maximum overflow nothing).
  EXPECT_EQ(ir(decompose(g)), R"(graph t(x: float32[B, 3]) {
  v.first: float32[B, 1] = slice(x, dim=1, end=1, start=0)
  v.f64: float64[B, 3] = to(x, dtype=float64)
  v.shift: float64[B, 1] = to(v.first, dtype=float64)
  v.shifted: float64[B, 3] = sub(v.f64, v.shift)
  v.mean_sum: float64[B, 1] = sum(v.shifted, dim=1, keepdim=true)
  v.mean: float64[B, 1] = div(v.mean_sum, 3)
  v.centered: float64[B, 3] = sub(v.shifted, v.mean)
  v.sq: float64[B, 3] = mul(v.centered, v.centered)
  v.sum: float64[B] = sum(v.sq, dim=1, keepdim=false)
  v.f64_var: float64[B] = div(v.sum, 3)
  v: float32[B] = to(v.f64_var, dtype=float32)
  w.first: float32[B, 1] = slice(x, dim=1, end=1, start=0)
  w.f64: float64[B, 3] = to(x, dtype=float64)
  w.shift: float64[B, 1] = to(w.first, dtype=float64)
  w.shifted: float64[B, 3] = sub(w.f64, w.shift)
  w.mean_sum: float64[B, 1] = sum(w.shifted, dim=-1, keepdim=true)
  w.mean: float64[B, 1] = div(w.mean_sum, 3)
  w.centered: float64[B, 3] = sub(w.shifted, w.mean)
  w.sq: float64[B, 3] = mul(w.centered, w.centered)
  w.sum: float64[B, 1] = sum(w.sq, dim=-1, keepdim=true)
  w.f64_var: float64[B, 1] = div(w.sum, 0)
  w: float32[B, 1] = to(w.f64_var, dtype=float32)
  return v, w
}
)");
}

TEST(Decompose, MeanOfFloat16ComputesInFloat32) {
  Graph g = graph_of(R"(inputs: {h: {shape: [2, 3], dtype: float16}}
graph:
  - {id: m, op: mean, args: [h]}
outputs: [m]
)");
  EXPECT_EQ(ir(decompose(g)), R"(graph t(h: float16[2, 3]) {
  h.f32: float32[2, 3] = to(h, dtype=float32)
  m.sum: float32[] = sum(h.f32, keepdim=false)
  m.f32: float32[] = div(m.sum, 6)
  m: float16[] = to(m.f32, dtype=float16)
  return m
}
)");
}

// The tanh gelu and silu stay whole: kernels compute them as x / (1 + e^(-2u)) and x / (1 + e^-x)
// (kernel_prelude.h), as ATen does.
TEST(Decompose, ErfGeluButNotTheTanhGeluOrSilu) {
  Graph g = graph_of(R"(inputs: {x: {shape: [4], dtype: float32}}
graph:
  - {id: g, op: gelu, args: [x]}
  - {id: t, op: gelu, args: [x], approximate: tanh}
  - {id: s, op: silu, args: [x]}
outputs: [g, t, s]
)");
  EXPECT_EQ(ir(decompose(g)), R"(graph t(x: float32[4]) {
  g.scaled: float32[4] = mul(x, 0.70710678118654757)
  g.erf: float32[4] = erf(g.scaled)
  g.one_plus: float32[4] = add(g.erf, 1.0)
  g.half: float32[4] = mul(x, 0.5)
  g: float32[4] = mul(g.half, g.one_plus)
  t: float32[4] = gelu(x, approximate=tanh)
  s: float32[4] = silu(x)
  return g, t, s
}
)");
}

TEST(Decompose, EvalBatchNormIsOneScaleAndShiftPerChannelAsInATen) {
  Graph g = graph_of(R"(dims: {N: [1, 2]}
inputs: {x: {shape: [N, 3, 2, 2], dtype: float32}}
params:
  w: {shape: [3], dtype: float32}
  b: {shape: [3], dtype: float32}
  m: {shape: [3], dtype: float32}
  v: {shape: [3], dtype: float32}
graph:
  - {id: y, op: batch_norm, args: [x, w, b, m, v], eps: 0.001}
outputs: [y]
)");
  EXPECT_EQ(ir(decompose(g)),
            R"(graph t(x: float32[N, 3, 2, 2], param w: float32[3], param b: float32[3], param m: float32[3], param v: float32[3]) {
  y.var_eps: float32[3] = add(v, 0.001)
  y.rstd: float32[3] = rsqrt(y.var_eps)
  y.scale: float32[3] = mul(y.rstd, w)
  y.mean_scaled: float32[3] = mul(m, y.scale)
  y.shift: float32[3] = sub(b, y.mean_scaled)
  y.scale_c: float32[3, 1, 1] = reshape(y.scale, shape=[3, 1, 1])
  y.shift_c: float32[3, 1, 1] = reshape(y.shift, shape=[3, 1, 1])
  y.scaled: float32[N, 3, 2, 2] = mul(x, y.scale_c)
  y: float32[N, 3, 2, 2] = add(y.scaled, y.shift_c)
  return y
}
)");
}

TEST(Decompose, TrainingBatchNormSumsInTwoStagesAndCopiesTheRunningStatsBack) {
  Graph g = graph_of(R"(inputs: {x: {shape: [2, 3, 2, 2], dtype: float32}}
params:
  w: {shape: [3], dtype: float32}
  b: {shape: [3], dtype: float32}
  m: {shape: [3], dtype: float32}
  v: {shape: [3], dtype: float32}
graph:
  - {id: y, op: batch_norm, args: [x, w, b, m, v], training: true, momentum: 0.25, eps: 0.001}
outputs: [y]
)");
  EXPECT_EQ(ir(decompose(g)),
            R"(graph t(x: float32[2, 3, 2, 2], param w: float32[3], param b: float32[3], param m: float32[3], param v: float32[3]) {
  y.x_f64: float64[2, 3, 2, 2] = to(x, dtype=float64)
  y.sum_rows: float64[2, 3, 1, 1] = sum(y.x_f64, dim=[2, 3], keepdim=true)
  y.sum: float64[1, 3, 1, 1] = sum(y.sum_rows, dim=[0], keepdim=true)
  y.batch_mean_f64: float64[1, 3, 1, 1] = div(y.sum, 8)
  y.batch_mean: float32[1, 3, 1, 1] = to(y.batch_mean_f64, dtype=float32)
  y.batch_mean_f64_rounded: float64[1, 3, 1, 1] = to(y.batch_mean, dtype=float64)
  y.centered: float64[2, 3, 2, 2] = sub(x, y.batch_mean_f64_rounded)
  y.sq: float64[2, 3, 2, 2] = mul(y.centered, y.centered)
  y.var_sum_rows: float64[2, 3, 1, 1] = sum(y.sq, dim=[2, 3], keepdim=true)
  y.var_sum: float64[1, 3, 1, 1] = sum(y.var_sum_rows, dim=[0], keepdim=true)
  y.batch_var: float64[1, 3, 1, 1] = div(y.var_sum, 8)
  y.var_eps: float64[1, 3, 1, 1] = add(y.batch_var, 0.001)
  y.invstd_f64: float64[1, 3, 1, 1] = rsqrt(y.var_eps)
  y.invstd: float32[1, 3, 1, 1] = to(y.invstd_f64, dtype=float32)
  y.weight_c: float32[3, 1, 1] = reshape(w, shape=[3, 1, 1])
  y.scale: float32[1, 3, 1, 1] = mul(y.invstd, y.weight_c)
  y.running_mean_batch: float32[3] = reshape(y.batch_mean, shape=[3])
  y.running_mean_f64: float64[3] = to(m, dtype=float64)
  y.running_mean_kept: float64[3] = mul(y.running_mean_f64, 0.75)
  y.running_mean_batch_f64: float64[3] = to(y.running_mean_batch, dtype=float64)
  y.running_mean_added: float64[3] = mul(y.running_mean_batch_f64, 0.25)
  y.running_mean_updated: float64[3] = add(y.running_mean_kept, y.running_mean_added)
  y.running_mean_written: float32[3] = copy_(m, y.running_mean_updated)
  y.unbiased_var: float64[1, 3, 1, 1] = div(y.var_sum, 7)
  y.running_var_batch: float64[3] = reshape(y.unbiased_var, shape=[3])
  y.running_var_f64: float64[3] = to(v, dtype=float64)
  y.running_var_kept: float64[3] = mul(y.running_var_f64, 0.75)
  y.running_var_added: float64[3] = mul(y.running_var_batch, 0.25)
  y.running_var_updated: float64[3] = add(y.running_var_kept, y.running_var_added)
  y.running_var_written: float32[3] = copy_(v, y.running_var_updated)
  y.mean_scaled: float32[1, 3, 1, 1] = mul(y.batch_mean, y.scale)
  y.scaled: float32[2, 3, 2, 2] = mul(x, y.scale)
  y.centered_scaled: float32[2, 3, 2, 2] = sub(y.scaled, y.mean_scaled)
  y.bias_c: float32[3, 1, 1] = reshape(b, shape=[3, 1, 1])
  y: float32[2, 3, 2, 2] = add(y.centered_scaled, y.bias_c)
  return y
}
)");
}

TEST(Decompose, LinearBiasBecomesAnAdd) {
  Graph g = graph_of(R"(inputs: {x: {shape: [2, 4], dtype: float32}}
params:
  w: {shape: [3, 4], dtype: float32}
  b: {shape: [3], dtype: float32}
graph:
  - {id: y, op: linear, args: [x, w, b]}
  - {id: z, op: linear, args: [x, w]}
outputs: [y, z]
)");
  EXPECT_EQ(ir(decompose(g)), R"(graph t(x: float32[2, 4], param w: float32[3, 4], param b: float32[3]) {
  y.linear: float32[2, 3] = linear(x, w)
  y: float32[2, 3] = add(y.linear, b)
  z: float32[2, 3] = linear(x, w)
  return y, z
}
)");
}

// Found by the fuzzer (`gbc divergence tolerance [linear,logical_and]`): a bfloat16 linear's
// product rounded to bfloat16 before the bias add rounds twice where ATen's addmm rounds once. The
// product and the add are float32, rounded once at the end.
TEST(Decompose, HalfLinearWithBiasRoundsOnce) {
  Graph g = graph_of(R"(inputs: {x: {shape: [2, 4], dtype: bfloat16}}
params:
  w: {shape: [3, 4], dtype: bfloat16}
  b: {shape: [3], dtype: bfloat16}
graph:
  - {id: y, op: linear, args: [x, w, b]}
outputs: [y]
)");
  EXPECT_EQ(ir(decompose(g)), R"(graph t(x: bfloat16[2, 4], param w: bfloat16[3, 4], param b: bfloat16[3]) {
  x.f32: float32[2, 4] = to(x, dtype=float32)
  w.f32: float32[3, 4] = to(w, dtype=float32)
  y.linear: float32[2, 3] = linear(x.f32, w.f32)
  b.f32: float32[3] = to(b, dtype=float32)
  y.f32: float32[2, 3] = add(y.linear, b.f32)
  y: bfloat16[2, 3] = to(y.f32, dtype=bfloat16)
  return y
}
)");
}

TEST(Decompose, LeavesWhatPrimitivesCannotExpressExactly) {
  // mean over a symbolic dim (no constant divisor), softmax over a dim that may be empty (amax
  // has no identity), layer_norm over no dims, batch_norm in training over a batch of symbolic
  // size (its running variance is unbiased by N / (N - 1)).
  Graph g = graph_of(R"(dims: {B: [1, 4], E: [0, 3]}
inputs:
  x: {shape: [B, 3], dtype: float32}
  e: {shape: [2, E], dtype: float32}
params:
  c: {shape: [3], dtype: float32}
  rm: {shape: [3], dtype: float32}
  rv: {shape: [3], dtype: float32}
graph:
  - {id: m, op: mean, args: [x], dim: 0}
  - {id: v, op: var, args: [x]}
  - {id: s, op: softmax, args: [e], dim: 1}
  - {id: l, op: logsumexp, args: [e], dim: 1}
  - {id: n, op: layer_norm, args: [x], normalized_shape: []}
  - {id: bn, op: batch_norm, args: [x, c, c, rm, rv], training: true}
outputs: [m, v, s, l, n, bn]
)");
  EXPECT_EQ(ir(decompose(g)), ir(g));
}

TEST(Decompose, RewritesInsideBranchesAndKeepsLocations) {
  Graph g = graph_of(R"(inputs: {x: {shape: [3], dtype: float32}, p: {shape: [], dtype: bool}}
graph:
  - op: if
    args: [p]
    result: y
    then:
      - {id: y, op: gelu, args: [x]}
    else:
      - {id: y, op: relu, args: [x]}
outputs: [y]
)");
  Graph d = decompose(g);
  EXPECT_EQ(ir(d), R"(graph t(x: float32[3], p: bool[]) {
  y: float32[3] = if(p, result=y) {
  then:
    y.then.scaled: float32[3] = mul(x, 0.70710678118654757)
    y.then.erf: float32[3] = erf(y.then.scaled)
    y.then.one_plus: float32[3] = add(y.then.erf, 1.0)
    y.then.half: float32[3] = mul(x, 0.5)
    y.then: float32[3] = mul(y.then.half, y.then.one_plus)
    yield y.then
  else:
    y.else: float32[3] = relu(x)
    yield y.else
  }
  return y
}
)");
  const Node& gelu_loc = g.body.nodes[0].blocks[0].nodes[0];
  for (const Node& n : d.body.nodes[0].blocks[0].nodes) {
    EXPECT_EQ(n.loc.str(), gelu_loc.loc.str());
    EXPECT_EQ(d.value(n.output()).loc.str(), gelu_loc.loc.str());
  }
}

}  // namespace
}  // namespace gbc
