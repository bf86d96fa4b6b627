// Helpers for the code generator tests: hand-built kernels (the shapes the lowering produces:
// broadcast, strided, half-precision, integer, softmax- and layer_norm-shaped reductions, argmax)
// and host buffers behind a GbcKernelArgs, so that a compiled kernel and the interpreter can run on
// the same inputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "compiler/kernel/kernel_abi.h"
#include "compiler/kernel/kernel_ir.h"

namespace gbc::testing {

/// |got - want| <= rtol * |want| + atol per float element, NaN matching NaN.
inline ::testing::AssertionResult floats_close(const std::vector<unsigned char>& got, const std::vector<unsigned char>& want,
                                               double rtol, double atol = 0.0) {
  const float* g = reinterpret_cast<const float*>(got.data());
  const float* w = reinterpret_cast<const float*>(want.data());
  for (size_t i = 0; i < got.size() / 4; ++i) {
    if (std::isnan(w[i]) && std::isnan(g[i])) continue;
    if (!(std::fabs(g[i] - w[i]) <= rtol * std::fabs(w[i]) + atol))
      return ::testing::AssertionFailure() << "element " << i << ": " << g[i] << " vs " << w[i];
  }
  return ::testing::AssertionSuccess();
}

inline kir::Buffer buffer(const std::string& name, DType dtype, bool output, kir::IndexKind index = kir::IndexKind::Contiguous,
                          int rank = 0, kir::Level level = kir::Level::Full) {
  kir::Buffer b;
  b.name = name;
  b.dtype = dtype;
  b.is_output = output;
  b.index = index;
  b.rank = rank;
  b.level = level;
  return b;
}

inline kir::ExprPtr f32(double v) { return kir::constant(DType::Float32, v); }

/// y = gelu(x) * w + exp(t) - c + scalar0, h = float16(y * 0.5) with x contiguous, w affine, t
/// strided (rank 2), c a broadcast scalar buffer, scalar0 a host scalar.
inline kir::Kernel pointwise_mix_kernel() {
  kir::Kernel k;
  k.name = "pointwise_mix";
  k.buffers = {buffer("x", DType::Float32, false), buffer("w", DType::Float32, false, kir::IndexKind::Affine),
               buffer("t", DType::Float32, false, kir::IndexKind::Strided, 2), buffer("c", DType::Float32, false, kir::IndexKind::Scalar),
               buffer("y", DType::Float32, true), buffer("h", DType::Float16, true)};
  k.scalar_args = {DType::Float32};
  using kir::op;
  auto x = kir::load(0, DType::Float32), w = kir::load(1, DType::Float32), t = kir::load(2, DType::Float32),
       c = kir::load(3, DType::Float32);
  auto y = op("add", DType::Float32,
              {op("sub", DType::Float32, {op("add", DType::Float32, {op("mul", DType::Float32, {op("gelu", DType::Float32, {x}), w}),
                                                                     op("exp", DType::Float32, {t})}),
                                          c}),
               kir::scalar_arg(0, DType::Float32)});
  k.stores = {{4, y}, {5, op("mul", DType::Float32, {y, f32(0.5)})}};
  return k;
}

/// Half-precision storage: o16 = float16(x16 * b16 + 1), obf = bfloat16(tanh(x16) + sigmoid(bf)),
/// o32 = float32(bf) - x16.
inline kir::Kernel half_kernel() {
  kir::Kernel k;
  k.name = "half_storage";
  k.buffers = {buffer("x16", DType::Float16, false), buffer("bf", DType::BFloat16, false), buffer("o16", DType::Float16, true),
               buffer("obf", DType::BFloat16, true), buffer("o32", DType::Float32, true)};
  using kir::op;
  auto x = kir::load(0, DType::Float32), b = kir::load(1, DType::Float32);
  k.stores = {{2, op("add", DType::Float32, {op("mul", DType::Float32, {x, b}), f32(1.0)})},
              {3, op("add", DType::Float32, {op("tanh", DType::Float32, {x}), op("sigmoid", DType::Float32, {b})})},
              {4, op("sub", DType::Float32, {b, x})}};
  return k;
}

/// int8 arithmetic that wraps: o = a * b + a - 100, n = -a, c = int8(x * 3.5) (float to int8
/// through int64, as ATen), m = clamp(a, -5, 7), lt = a < b.
inline kir::Kernel int8_kernel() {
  kir::Kernel k;
  k.name = "int8_wrap";
  k.buffers = {buffer("a", DType::Int8, false), buffer("b", DType::Int8, false), buffer("x", DType::Float32, false),
               buffer("o", DType::Int8, true),  buffer("n", DType::Int8, true),  buffer("c", DType::Int8, true),
               buffer("m", DType::Int8, true),  buffer("lt", DType::Bool, true)};
  using kir::op;
  auto a = kir::load(0, DType::Int8), b = kir::load(1, DType::Int8), x = kir::load(2, DType::Float32);
  auto clamp = op("clamp", DType::Int8, {a});
  auto* c = const_cast<kir::Expr*>(clamp.get());
  c->has_min = c->has_max = true;
  c->min = -5;
  c->max = 7;
  k.stores = {{3, op("sub", DType::Int8,
                     {op("add", DType::Int8, {op("mul", DType::Int8, {a, b}), a}), kir::constant_int(DType::Int8, 100)})},
              {4, op("neg", DType::Int8, {a})},
              {5, kir::cast(op("mul", DType::Float32, {x, f32(3.5)}), DType::Int8)},
              {6, clamp},
              {7, op("lt", DType::Bool, {a, b})}};
  return k;
}

/// softmax over r: s0 = max x, s1 = sum exp(x - s0), y = exp(x - s0) / s1; x has `index`
/// (Strided: rank 2), y contiguous.
inline kir::Kernel softmax_kernel(kir::IndexKind index = kir::IndexKind::Contiguous) {
  kir::Kernel k;
  k.name = index == kir::IndexKind::Contiguous ? "softmax" : "softmax_strided";
  k.kind = kir::KernelKind::Reduction;
  k.buffers = {buffer("x", DType::Float32, false, index, index == kir::IndexKind::Strided ? 2 : 0),
               buffer("y", DType::Float32, true)};
  using kir::op;
  auto x = kir::load(0, DType::Float32);
  auto e = op("exp", DType::Float32, {op("sub", DType::Float32, {x, kir::stage_result(0, DType::Float32)})});
  k.stages = {{kir::Combine::Max, DType::Float32, x}, {kir::Combine::Sum, DType::Float32, e}};
  k.stores = {{1, op("div", DType::Float32, {e, kir::stage_result(1, DType::Float32)})}};
  return k;
}

/// s = sum over r of exp(x), y = exp(x) * g / s with a second contiguous input g: only g is read
/// again after the sum's pass (x only through exp(x)). With `x_again` (no g): y = (exp(x) + x) / s
/// reads x again.
inline kir::Kernel exp_gate_kernel(bool x_again = false) {
  kir::Kernel k;
  k.name = x_again ? "exp_plus_x" : "exp_gate";
  k.kind = kir::KernelKind::Reduction;
  k.buffers = {buffer("x", DType::Float32, false)};
  if (!x_again) k.buffers.push_back(buffer("g", DType::Float32, false));
  k.buffers.push_back(buffer("y", DType::Float32, true));
  using kir::op;
  auto x = kir::load(0, DType::Float32);
  auto e = op("exp", DType::Float32, {x});
  k.stages = {{kir::Combine::Sum, DType::Float32, e}};
  auto top = x_again ? op("add", DType::Float32, {e, x}) : op("mul", DType::Float32, {e, kir::load(1, DType::Float32)});
  k.stores = {{static_cast<int>(k.buffers.size()) - 1, op("div", DType::Float32, {top, kir::stage_result(0, DType::Float32)})}};
  return k;
}

/// Masked attention scores as gbc lowers them: p = softmax over r of where(mask[r], x * 0.125, fill)
/// with a float64 sum, and log(p); the bool mask is one row broadcast over o (affine, r
/// contiguous), the fill a one-element tensor (scalar), or with number_fill the number -10000.
inline kir::Kernel masked_softmax_kernel(bool number_fill = false) {
  kir::Kernel k;
  k.name = number_fill ? "masked_softmax_number_fill" : "masked_softmax";
  k.kind = kir::KernelKind::Reduction;
  k.buffers = {buffer("x", DType::Float32, false), buffer("mask", DType::Bool, false, kir::IndexKind::Affine)};
  if (!number_fill) k.buffers.push_back(buffer("fill", DType::Float32, false, kir::IndexKind::Scalar));
  k.buffers.push_back(buffer("p", DType::Float32, true));
  k.buffers.push_back(buffer("logp", DType::Float32, true));
  k.buffers[1].r_contiguous = true;
  using kir::op;
  const int p_buffer = number_fill ? 2 : 3;
  auto scaled = op("mul", DType::Float32, {kir::load(0, DType::Float32), f32(0.125)});
  auto fill = number_fill ? f32(-10000.0) : kir::load(2, DType::Float32);
  auto m = op("where", DType::Float32, {kir::load(1, DType::Bool), scaled, fill});
  auto e = op("exp", DType::Float32, {op("sub", DType::Float32, {m, kir::stage_result(0, DType::Float32)})});
  k.stages = {{kir::Combine::Max, DType::Float32, m}, {kir::Combine::Sum, DType::Float64, kir::cast(e, DType::Float64)}};
  auto p = op("div", DType::Float32, {e, kir::cast(kir::stage_result(1, DType::Float64), DType::Float32)});
  k.stores = {{p_buffer, p}, {p_buffer + 1, op("log", DType::Float32, {p})}};
  return k;
}

/// layer_norm over r with float64 sums: mean = s0 / n, var = s1 / n with s1 = sum (x - mean)^2,
/// y = (x - mean) * rsqrt(var + 1e-5) * w[r] + b[r] (w, b affine: stride 0 over rows), and the
/// per-row mean stored in m.
inline kir::Kernel layer_norm_kernel(double n) {
  kir::Kernel k;
  k.name = "layer_norm";
  k.kind = kir::KernelKind::Reduction;
  k.buffers = {buffer("x", DType::Float32, false), buffer("w", DType::Float32, false, kir::IndexKind::Affine),
               buffer("b", DType::Float32, false, kir::IndexKind::Affine), buffer("y", DType::Float32, true),
               buffer("m", DType::Float32, true, kir::IndexKind::Contiguous, 0, kir::Level::Outer)};
  using kir::op;
  auto x = kir::load(0, DType::Float32);
  auto x64 = kir::cast(x, DType::Float64);
  auto mean64 = op("div", DType::Float64, {kir::stage_result(0, DType::Float64), kir::constant(DType::Float64, n)});
  auto mean = kir::cast(mean64, DType::Float32);
  auto centered = op("sub", DType::Float64, {x64, mean64});
  auto var = kir::cast(op("div", DType::Float64, {kir::stage_result(1, DType::Float64), kir::constant(DType::Float64, n)}),
                       DType::Float32);
  auto xc = op("sub", DType::Float32, {x, mean});
  auto norm = op("mul", DType::Float32, {xc, op("rsqrt", DType::Float32, {op("add", DType::Float32, {var, f32(1e-5)})})});
  k.stages = {{kir::Combine::Sum, DType::Float64, x64},
              {kir::Combine::Sum, DType::Float64, op("mul", DType::Float64, {centered, centered})}};
  k.stores = {{3, op("add", DType::Float32, {op("mul", DType::Float32, {norm, kir::load(1, DType::Float32)}), kir::load(2, DType::Float32)})},
              {4, mean}};
  return k;
}

/// i = argmax over r of x (first maximum, NaN wins), v = max over r of x, per row.
inline kir::Kernel argmax_kernel(DType dtype) {
  kir::Kernel k;
  k.name = "argmax_" + std::string(dtype_name(dtype));
  k.kind = kir::KernelKind::Reduction;
  k.buffers = {buffer("x", dtype, false), buffer("i", DType::Int64, true, kir::IndexKind::Contiguous, 0, kir::Level::Outer),
               buffer("v", dtype, true, kir::IndexKind::Contiguous, 0, kir::Level::Outer)};
  auto x = kir::load(0, compute_dtype(dtype));
  k.stages = {{kir::Combine::ArgMax, compute_dtype(dtype), x}, {kir::Combine::Max, compute_dtype(dtype), x}};
  k.stores = {{1, kir::stage_result(0, DType::Int64)}, {2, kir::stage_result(1, compute_dtype(dtype))}};
  return k;
}

/// Integer reductions of int32 x: sum (int64, wraps), prod (int64), min and max (int32).
inline kir::Kernel int_reduce_kernel() {
  kir::Kernel k;
  k.name = "int_reduce";
  k.kind = kir::KernelKind::Reduction;
  auto per_row = [](const std::string& name, DType d) {
    return buffer(name, d, true, kir::IndexKind::Contiguous, 0, kir::Level::Outer);
  };
  k.buffers = {buffer("x", DType::Int32, false), per_row("sum", DType::Int64), per_row("prod", DType::Int64),
               per_row("min", DType::Int32), per_row("max", DType::Int32)};
  auto x = kir::load(0, DType::Int32);
  auto x64 = kir::cast(x, DType::Int64);
  k.stages = {{kir::Combine::Sum, DType::Int64, x64},
              {kir::Combine::Prod, DType::Int64, x64},
              {kir::Combine::Min, DType::Int32, x},
              {kir::Combine::Max, DType::Int32, x}};
  k.stores = {{1, kir::stage_result(0, DType::Int64)},
              {2, kir::stage_result(1, DType::Int64)},
              {3, kir::stage_result(2, DType::Int32)},
              {4, kir::stage_result(3, DType::Int32)}};
  return k;
}

/// A one-stage reduction whose rows may be split across blocks on CUDA: mean[o] = sum(x) / inner,
/// as float32 (the per-row store divides by a host scalar, the count).
inline kir::Kernel mean_kernel() {
  kir::Kernel k;
  k.name = "mean_rows";
  k.kind = kir::KernelKind::Reduction;
  k.buffers = {buffer("x", DType::Float32, false),
               buffer("mean", DType::Float32, true, kir::IndexKind::Contiguous, 0, kir::Level::Outer)};
  k.scalar_args = {DType::Float32};
  k.stages = {{kir::Combine::Sum, DType::Float32, kir::load(0, DType::Float32)}};
  k.stores = {{1, kir::op("div", DType::Float32, {kir::stage_result(0, DType::Float32), kir::scalar_arg(0, DType::Float32)})}};
  return k;
}

/// The kernel holding only the CUDA row schedule of `rows` (kir::Kernel::cuda_rows), named after it.
inline kir::Kernel of_row_class(kir::Kernel k, kir::CudaRows rows) {
  k.name += std::string("_") + kir::cuda_rows_name(rows);
  k.cuda_rows = rows;
  return k;
}

/// Host memory for one kernel call: owned byte arrays per buffer and the GbcKernelArgs over them.
class HostArgs {
 public:
  /// A buffer of `elements` elements of `dtype` (strides and sizes set separately).
  void add(DType dtype, size_t elements) {
    storage_.emplace_back(std::max<size_t>(elements, 1) * static_cast<size_t>(dtype_size(dtype)));
    buffers_.push_back(GbcBufferArg{});
    buffers_.back().data = storage_.back().data();
  }
  GbcBufferArg& arg(size_t b) { return buffers_.at(b); }
  size_t arg_count() const { return buffers_.size(); }
  template <typename T>
  T* data(size_t b) {
    return reinterpret_cast<T*>(storage_.at(b).data());
  }
  std::vector<unsigned char>& bytes(size_t b) { return storage_.at(b); }
  void set_affine(size_t b, int64_t s0, int64_t s1 = 0) {
    buffers_.at(b).s0 = s0;
    buffers_.at(b).s1 = s1;
  }
  void set_strided(size_t b, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
    GbcBufferArg& a = buffers_.at(b);
    a.rank = static_cast<int32_t>(sizes.size());
    for (size_t d = 0; d < sizes.size(); ++d) {
      a.sizes[d] = sizes[d];
      a.strides[d] = strides[d];
    }
  }
  std::vector<double> scalars;

  GbcKernelArgs args(int64_t numel, int64_t outer, int64_t inner, int32_t threads = 1) {
    GbcKernelArgs a{};
    a.numel = numel;
    a.outer = outer;
    a.inner = inner;
    a.buffers = buffers_.data();
    a.scalars = scalars.data();
    a.num_threads = threads;
    return a;
  }

 private:
  std::vector<std::vector<unsigned char>> storage_;
  std::vector<GbcBufferArg> buffers_;
};

/// n uniform floats in [lo, hi) from `seed`.
inline void fill_random(float* p, size_t n, uint32_t seed, float lo = -4.0f, float hi = 4.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (size_t i = 0; i < n; ++i) p[i] = dist(rng);
}

/// Arguments of layer_norm_kernel over [outer, inner]: random x, and w and b of [inner] read by
/// every row (affine, strides 0 and 1).
inline HostArgs layer_norm_args(int64_t outer, int64_t inner) {
  HostArgs h;
  h.add(DType::Float32, static_cast<size_t>(outer * inner));
  h.add(DType::Float32, static_cast<size_t>(inner));
  h.add(DType::Float32, static_cast<size_t>(inner));
  h.add(DType::Float32, static_cast<size_t>(outer * inner));
  h.add(DType::Float32, static_cast<size_t>(outer));
  fill_random(h.data<float>(0), static_cast<size_t>(outer * inner), 11);
  fill_random(h.data<float>(1), static_cast<size_t>(inner), 12);
  fill_random(h.data<float>(2), static_cast<size_t>(inner), 13);
  h.set_affine(1, 0, 1);
  h.set_affine(2, 0, 1);
  return h;
}

/// A reduction reading inputs that every reduced dim broadcasts, as the runtime specializes them
/// (BufferSpec::per_row: one value per row, a per-channel mean in a sum over H and W): s = sum over
/// r of (x - m)^2 in float64 and y = tanh(x * g) * sigmoid(x - m), with m per row through strided
/// offsets (rank 2) and g per row affine; tanh and sigmoid make the pointwise part run in staged
/// passes on the CPU.
inline kir::Kernel per_row_inputs_kernel() {
  kir::Kernel k;
  k.name = "per_row_inputs";
  k.kind = kir::KernelKind::Reduction;
  k.buffers = {buffer("x", DType::Float32, false),
               buffer("m", DType::Float32, false, kir::IndexKind::Strided, 2, kir::Level::Outer),
               buffer("g", DType::Float32, false, kir::IndexKind::Affine, 0, kir::Level::Outer),
               buffer("y", DType::Float32, true),
               buffer("s", DType::Float64, true, kir::IndexKind::Contiguous, 0, kir::Level::Outer)};
  using kir::op;
  auto x = kir::load(0, DType::Float32);
  auto centered = op("sub", DType::Float32, {x, kir::load(1, DType::Float32)});
  auto c64 = kir::cast(centered, DType::Float64);
  k.stages = {{kir::Combine::Sum, DType::Float64, op("mul", DType::Float64, {c64, c64})}};
  auto gated = op("tanh", DType::Float32, {op("mul", DType::Float32, {x, kir::load(2, DType::Float32)})});
  k.stores = {{3, op("mul", DType::Float32, {gated, op("sigmoid", DType::Float32, {centered})})},
              {4, kir::stage_result(0, DType::Float64)}};
  return k;
}

/// Arguments of per_row_inputs_kernel for rows o = n * channels + c: m one value per channel
/// (sizes [outer / channels, channels], strides [0, 1]), g every other element of a buffer.
inline HostArgs per_row_inputs_args(int64_t outer, int64_t inner, int64_t channels) {
  HostArgs h;
  h.add(DType::Float32, static_cast<size_t>(outer * inner));
  h.add(DType::Float32, static_cast<size_t>(channels));
  h.add(DType::Float32, static_cast<size_t>(2 * outer));
  h.add(DType::Float32, static_cast<size_t>(outer * inner));
  h.add(DType::Float64, static_cast<size_t>(outer));
  fill_random(h.data<float>(0), static_cast<size_t>(outer * inner), 31, -6.0f, 6.0f);
  fill_random(h.data<float>(1), static_cast<size_t>(channels), 32, -2.0f, 2.0f);
  fill_random(h.data<float>(2), static_cast<size_t>(2 * outer), 33, -3.0f, 3.0f);
  h.set_strided(1, {outer / channels, channels}, {0, 1});
  h.set_affine(2, 2);
  return h;
}

}  // namespace gbc::testing
