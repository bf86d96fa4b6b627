// CPU code generation end to end: generated C++ compiles, loads and computes what the interpreter
// computes (bit for bit, but for the association of float sums), for broadcast, affine and strided
// inputs, half-precision storage, wrapping integers, multi-stage reductions and argmax, on one
// thread and several; every op on every dtype it supports; and the generated loops vectorize.
#include "compiler/codegen/cpu_codegen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <regex>
#include <set>

#include "compiler/codegen/cpu_compiler.h"
#include "compiler/codegen/embedded_sources.h"
#include "compiler/ir/kernel_prelude.h"
#include "compiler/kernel/interpreter.h"
#include "tests/codegen/codegen_test_util.h"
// After the prelude and the ABI, as in generated sources (for GBC_ROW_CACHE_BYTES).
#include "compiler/codegen/kernel_support.h"

namespace gbc {
namespace {

using codegen::compile_cpu;
using codegen::CpuCompileResult;
using testing::fill_random;
using testing::HostArgs;
using testing::floats_close;

std::vector<std::string> names_of(const std::vector<kir::Kernel>& kernels) {
  std::vector<std::string> names;
  for (const auto& k : kernels) names.push_back(k.name);
  return names;
}

// Compiles all kernels as one translation unit (one compiler run per test binary and set).
std::vector<GbcKernelFn> compile_all(const std::vector<kir::Kernel>& kernels, const std::string& graph) {
  CpuCompileResult r = compile_cpu(codegen::generate_cpu_source(kernels, graph), names_of(kernels));
  EXPECT_TRUE(r.ok) << r.log;
  if (!r.ok) return {};
  return r.kernels;
}


// Runs the interpreter and the compiled kernel on copies of the same arguments; returns the
// outputs of both (per output buffer, its bytes). `cols`: GbcKernelArgs::cols, for kernels in the
// column schedule. The compiled kernel runs twice, with plain and with streaming stores
// (GbcKernelArgs::stream_stores), which must write the same bytes: so every test here covers both.
struct Outputs {
  std::vector<std::vector<unsigned char>> interpreted, compiled;
};
Outputs run_both(const kir::Kernel& kernel, GbcKernelFn fn, HostArgs& host, int64_t numel, int64_t outer, int64_t inner,
                 int32_t threads = 1, int64_t cols = 0) {
  Outputs out;
  GbcKernelArgs args = host.args(numel, outer, inner, threads);
  args.cols = cols;
  interpret_kernel(kernel, args);
  for (size_t b = 0; b < kernel.buffers.size(); ++b) {
    if (!kernel.buffers[b].is_output) continue;
    out.interpreted.push_back(host.bytes(b));
    std::fill(host.bytes(b).begin(), host.bytes(b).end(), 0xAB);
  }
  fn(&args);
  for (size_t b = 0; b < kernel.buffers.size(); ++b)
    if (kernel.buffers[b].is_output) out.compiled.push_back(host.bytes(b));
  GbcKernelArgs streaming = args;
  streaming.stream_stores = 1;
  size_t output = 0;
  for (size_t b = 0; b < kernel.buffers.size(); ++b)
    if (kernel.buffers[b].is_output) std::fill(host.bytes(b).begin(), host.bytes(b).end(), 0xAB);
  fn(&streaming);
  for (size_t b = 0; b < kernel.buffers.size(); ++b)
    if (kernel.buffers[b].is_output) EXPECT_EQ(host.bytes(b), out.compiled[output++]) << kernel.name << ": streaming stores, buffer " << b;
  return out;
}

// softmax_kernel with x Strided but each row one contiguous run (kir::Buffer::r_contiguous), as
// for a [T, T] mask broadcast over heads.
kir::Kernel strided_rows_softmax_kernel() {
  kir::Kernel k = testing::softmax_kernel(kir::IndexKind::Strided);
  k.name = "softmax_strided_rows";
  k.buffers[0].r_contiguous = true;
  return k;
}

// layer_norm_kernel with x read across rows (affine, r's stride at run time: a transposed view),
// in the row schedule.
kir::Kernel transposed_layer_norm_kernel() {
  kir::Kernel k = testing::layer_norm_kernel(37);
  k.name = "layer_norm_transposed";
  k.buffers[0].index = kir::IndexKind::Affine;
  return k;
}

// bias_gelu_residual_layer_norm's kernel in small: a layer_norm of gelu(x, tanh), so that each
// pass over the row calls gbc_gelu_tanh (twice per pass with the vector loop's scalar tail). At
// -O2 GCC inlined none of those calls and left their simd loops scalar, unless the prelude's
// helpers are always_inline (kernel_prelude.h).
kir::Kernel gelu_layer_norm_kernel() {
  kir::Kernel k;
  k.name = "gelu_layer_norm";
  k.kind = kir::KernelKind::Reduction;
  k.buffers = {testing::buffer("x", DType::Float32, false), testing::buffer("y", DType::Float32, true)};
  using kir::op;
  auto g = op("gelu_tanh", DType::Float32, {kir::load(0, DType::Float32)});
  auto mean = kir::cast(op("div", DType::Float64, {kir::stage_result(0, DType::Float64), kir::constant(DType::Float64, 64)}),
                        DType::Float32);
  auto xc = op("sub", DType::Float32, {g, mean});
  auto var = kir::cast(op("div", DType::Float64, {kir::stage_result(1, DType::Float64), kir::constant(DType::Float64, 64)}),
                       DType::Float32);
  k.stages = {{kir::Combine::Sum, DType::Float64, kir::cast(g, DType::Float64)},
              {kir::Combine::Sum, DType::Float64, kir::cast(op("mul", DType::Float32, {xc, xc}), DType::Float64)}};
  k.stores = {{1, op("mul", DType::Float32, {xc, op("rsqrt", DType::Float32, {op("add", DType::Float32, {var, testing::f32(1e-5)})})})}};
  return k;
}

// Staged loops (cpu_codegen.cpp): o = silu(sigmoid(tanh(x * 1.5 + y))), e = exp(x) + tanh(y), with
// y every other element of a buffer (affine): five costly values, three of them chained, tanh,
// sigmoid and silu each in two steps.
kir::Kernel staged_chain_kernel() {
  kir::Kernel k;
  k.name = "staged_chain";
  k.buffers = {testing::buffer("x", DType::Float32, false), testing::buffer("y", DType::Float32, false, kir::IndexKind::Affine),
               testing::buffer("o", DType::Float32, true), testing::buffer("e", DType::Float32, true)};
  using kir::op;
  auto x = kir::load(0, DType::Float32), y = kir::load(1, DType::Float32);
  auto t = op("tanh", DType::Float32, {op("add", DType::Float32, {op("mul", DType::Float32, {x, testing::f32(1.5)}), y})});
  k.stores = {{2, op("silu", DType::Float32, {op("sigmoid", DType::Float32, {t})})},
              {3, op("add", DType::Float32, {op("exp", DType::Float32, {x}), op("tanh", DType::Float32, {y})})}};
  return k;
}

// y = sigmoid(x) / sum over the row of sigmoid(x) (summed in float64): the row cache's fill
// computes the two-step sigmoid as staged loops over each block's whole lane groups.
kir::Kernel sigmoid_norm_kernel() {
  kir::Kernel k;
  k.name = "sigmoid_norm";
  k.kind = kir::KernelKind::Reduction;
  k.buffers = {testing::buffer("x", DType::Float32, false), testing::buffer("y", DType::Float32, true)};
  using kir::op;
  auto s = op("sigmoid", DType::Float32, {kir::load(0, DType::Float32)});
  k.stages = {{kir::Combine::Sum, DType::Float64, kir::cast(s, DType::Float64)}};
  k.stores = {{1, op("div", DType::Float32, {s, kir::cast(kir::stage_result(0, DType::Float64), DType::Float32)})}};
  return k;
}

// Two-step ops of clamped operands: y = tanh(clamp(x, -44, 44)), z = sigmoid(c) + silu(c) with
// c = clamp(x, -87, 87): each exp step takes its variant without range handling (value_bounds.h).
kir::Kernel clamped_steps_kernel() {
  kir::Kernel k;
  k.name = "clamped_steps";
  k.buffers = {testing::buffer("x", DType::Float32, false), testing::buffer("y", DType::Float32, true),
               testing::buffer("z", DType::Float32, true)};
  using kir::op;
  auto clamp = [](kir::ExprPtr v, double limit) {
    auto e = std::make_shared<kir::Expr>(*op("clamp", DType::Float32, {std::move(v)}));
    e->has_min = e->has_max = true;
    e->min = -limit;
    e->max = limit;
    return kir::ExprPtr(e);
  };
  auto x = kir::load(0, DType::Float32);
  auto c = clamp(x, 87.0);
  k.stores = {{1, op("tanh", DType::Float32, {clamp(x, 44.0)})},
              {2, op("add", DType::Float32, {op("sigmoid", DType::Float32, {c}), op("silu", DType::Float32, {c})})}};
  return k;
}

class CpuCodegenTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    kernels_ = {testing::pointwise_mix_kernel(),
                testing::half_kernel(),
                testing::int8_kernel(),
                testing::softmax_kernel(),
                testing::softmax_kernel(kir::IndexKind::Strided),
                strided_rows_softmax_kernel(),
                testing::layer_norm_kernel(37),
                transposed_layer_norm_kernel(),
                testing::argmax_kernel(DType::Float32),
                testing::argmax_kernel(DType::Int16),
                testing::int_reduce_kernel(),
                staged_chain_kernel(),
                clamped_steps_kernel(),
                sigmoid_norm_kernel(),
                testing::per_row_inputs_kernel()};
    std::vector<GbcKernelFn> fns = compile_all(kernels_, "cpu_codegen_test");
    for (size_t k = 0; k < fns.size(); ++k) fns_[kernels_[k].name] = fns[k];
  }
  static const kir::Kernel& kernel(const std::string& name) {
    for (const auto& k : kernels_)
      if (k.name == name) return k;
    throw std::out_of_range(name);
  }
  static GbcKernelFn fn(const std::string& name) { return fns_.at(name); }

  static std::vector<kir::Kernel> kernels_;
  static std::map<std::string, GbcKernelFn> fns_;
};
std::vector<kir::Kernel> CpuCodegenTest::kernels_;
std::map<std::string, GbcKernelFn> CpuCodegenTest::fns_;

// x [rows, cols] contiguous; w every other element of a buffer (affine, stride 2); t the transpose
// of a [cols, rows] buffer (strided); c one value.
HostArgs pointwise_mix_args(int64_t rows, int64_t cols) {
  const int64_t n = rows * cols;
  HostArgs h;
  h.add(DType::Float32, static_cast<size_t>(n));
  h.add(DType::Float32, static_cast<size_t>(2 * n));
  h.add(DType::Float32, static_cast<size_t>(n));
  h.add(DType::Float32, 1);
  h.add(DType::Float32, static_cast<size_t>(n));
  h.add(DType::Float16, static_cast<size_t>(n));
  fill_random(h.data<float>(0), static_cast<size_t>(n), 1);
  fill_random(h.data<float>(1), static_cast<size_t>(2 * n), 2);
  fill_random(h.data<float>(2), static_cast<size_t>(n), 3);
  h.data<float>(0)[0] = std::numeric_limits<float>::quiet_NaN();
  h.data<float>(0)[1] = -std::numeric_limits<float>::infinity();
  h.data<float>(2)[5] = 100.0f;  // exp overflows; float16 overflows
  h.data<float>(3)[0] = 0.25f;
  h.set_affine(1, 2);
  h.set_strided(2, {rows, cols}, {1, rows});
  h.scalars = {1.5};
  return h;
}

TEST_F(CpuCodegenTest, PointwiseWithBroadcastAffineAndStridedInputsMatchesInterpreter) {
  HostArgs h = pointwise_mix_args(13, 29);
  Outputs out = run_both(kernel("pointwise_mix"), fn("pointwise_mix"), h, 13 * 29, 0, 0);
  ASSERT_EQ(out.compiled.size(), 2u);
  EXPECT_EQ(out.compiled[0], out.interpreted[0]);
  EXPECT_EQ(out.compiled[1], out.interpreted[1]);
  const float* y = reinterpret_cast<const float*>(out.compiled[0].data());
  EXPECT_TRUE(std::isnan(y[0]));
  // y[1] = gelu(-inf) * w = nan, as ATen's formula gives.
  EXPECT_TRUE(std::isnan(y[1]));
  // t is the transpose: element i = (row, col) reads t_buffer[col * rows + row].
  const float x = h.data<float>(0)[30], w = h.data<float>(1)[60], t = h.data<float>(2)[(30 % 29) * 13 + 30 / 29];
  EXPECT_EQ(y[30], gbc_add(gbc_sub(gbc_add(gbc_mul(gbc_gelu(x), w), gbc_exp(t)), 0.25f), 1.5f));
}

TEST_F(CpuCodegenTest, ParallelPointwiseMatchesSerial) {
  const int64_t rows = 300, cols = 257;  // above the parallel threshold, not a multiple of 64
  HostArgs h = pointwise_mix_args(rows, cols);
  Outputs out = run_both(kernel("pointwise_mix"), fn("pointwise_mix"), h, rows * cols, 0, 0, /*threads=*/2);
  EXPECT_EQ(out.compiled[0], out.interpreted[0]);
  EXPECT_EQ(out.compiled[1], out.interpreted[1]);
}

TEST_F(CpuCodegenTest, HalfPrecisionStorageMatchesInterpreter) {
  const std::vector<float> values = {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 7e4f, 6e-8f, 1e-5f, 3.14159f, -1e-3f,
                                     std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN(),
                                     0.1f, 100.0f, -7.0f, 2049.0f, 1.0f / 3.0f};
  const size_t n = values.size() * values.size();
  HostArgs h;
  h.add(DType::Float16, n);
  h.add(DType::BFloat16, n);
  h.add(DType::Float16, n);
  h.add(DType::BFloat16, n);
  h.add(DType::Float32, n);
  for (size_t i = 0; i < n; ++i) {
    h.data<uint16_t>(0)[i] = gbc_f32_to_f16(values[i / values.size()]);
    h.data<uint16_t>(1)[i] = gbc_f32_to_bf16(values[i % values.size()]);
  }
  Outputs out = run_both(kernel("half_storage"), fn("half_storage"), h, static_cast<int64_t>(n), 0, 0);
  for (size_t k = 0; k < out.compiled.size(); ++k) EXPECT_EQ(out.compiled[k], out.interpreted[k]) << "output " << k;
  // 65504 * 1 + 1 rounds back to 65504 in float16; 7e4 is already inf.
  const uint16_t* o16 = reinterpret_cast<const uint16_t*>(out.compiled[0].data());
  EXPECT_EQ(gbc_f16_to_f32(o16[4 * values.size() + 2]), 65504.0f);
}

TEST_F(CpuCodegenTest, Int8ArithmeticWrapsAsInterpreter) {
  const size_t n = 256 * 3;
  HostArgs h;
  h.add(DType::Int8, n);
  h.add(DType::Int8, n);
  h.add(DType::Float32, n);
  h.add(DType::Int8, n);
  h.add(DType::Int8, n);
  h.add(DType::Int8, n);
  h.add(DType::Int8, n);
  h.add(DType::Bool, n);
  for (size_t i = 0; i < n; ++i) {
    h.data<int8_t>(0)[i] = static_cast<int8_t>(i);
    h.data<int8_t>(1)[i] = static_cast<int8_t>(i * 7 + 3);
    h.data<float>(2)[i] = static_cast<float>(i) - 400.0f;  // x * 3.5 leaves int8's range: wraps
  }
  Outputs out = run_both(kernel("int8_wrap"), fn("int8_wrap"), h, static_cast<int64_t>(n), 0, 0);
  for (size_t k = 0; k < out.compiled.size(); ++k) EXPECT_EQ(out.compiled[k], out.interpreted[k]) << "output " << k;
  const int8_t* o = reinterpret_cast<const int8_t*>(out.compiled[0].data());
  const int8_t a = 100, b = static_cast<int8_t>(100 * 7 + 3);
  EXPECT_EQ(o[100], static_cast<int8_t>(static_cast<uint8_t>(a * b + a - 100)));
  const int8_t* neg = reinterpret_cast<const int8_t*>(out.compiled[1].data());
  EXPECT_EQ(neg[128], -128);  // -(-128) wraps
  const int8_t* c = reinterpret_cast<const int8_t*>(out.compiled[2].data());
  EXPECT_EQ(c[0], static_cast<int8_t>(static_cast<int64_t>(-400.0f * 3.5f)));
}

// Special values and the range edges of tanh's limited exp (|2x| > 88), sigmoid's and silu's
// subnormal results, blocks of GBC_BLOCK and a partial one: bit for bit the interpreter's.
// An exp step whose operand the ops bound (sigmoid of a tanh, silu of a sigmoid, tanh of a clamp)
// drops its range handling; bit for bit the interpreter's, also at the edges of the bounds.
TEST_F(CpuCodegenTest, BoundedOperandsTakeTheExpStepWithoutRangeHandling) {
  auto contains = [](const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; };
  const std::string chain = codegen::generate_cpu_kernel(staged_chain_kernel());
  EXPECT_TRUE(contains(chain, "gbc_sigmoid_exp_bounded(")) << "sigmoid of a tanh";
  EXPECT_TRUE(contains(chain, "gbc_silu_exp_bounded(")) << "silu of a sigmoid";
  EXPECT_TRUE(contains(chain, "gbc_tanh_exp(")) << "tanh of x * 1.5 + y: unbounded";
  EXPECT_FALSE(contains(chain, "gbc_tanh_exp_bounded("));
  const std::string clamped = codegen::generate_cpu_kernel(clamped_steps_kernel());
  for (const char* step : {"gbc_tanh_exp_bounded(", "gbc_sigmoid_exp_bounded(", "gbc_silu_exp_bounded("})
    EXPECT_TRUE(contains(clamped, step)) << step;

  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> special = {0.0f, -0.0f, 1e-30f, 43.99f, 44.0f, -44.0f, 50.0f, 86.9f, 87.0f, -87.0f, -100.0f,
                                      inf, -inf, std::numeric_limits<float>::quiet_NaN()};
  const int64_t n = 300;
  HostArgs h;
  for (int b = 0; b < 3; ++b) h.add(DType::Float32, static_cast<size_t>(n));
  fill_random(h.data<float>(0), static_cast<size_t>(n), 31, -120.0f, 120.0f);
  std::copy(special.begin(), special.end(), h.data<float>(0));
  Outputs out = run_both(kernel("clamped_steps"), fn("clamped_steps"), h, n, 0, 0);
  EXPECT_EQ(out.compiled[0], out.interpreted[0]);
  EXPECT_EQ(out.compiled[1], out.interpreted[1]);
}

TEST_F(CpuCodegenTest, StagedLoopsMatchInterpreter) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> special = {0.0f, -0.0f, 1e-30f, -1e-30f, 0.3f, -0.6249f, 0.625f, 43.9f, 44.1f, -44.1f, 60.0f,
                                      -88.5f, 90.0f, -104.5f, 200.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN()};
  for (const int64_t n : {int64_t{1}, int64_t{256}, int64_t{1000}}) {
    HostArgs h;
    h.add(DType::Float32, static_cast<size_t>(n));
    h.add(DType::Float32, static_cast<size_t>(2 * n));
    h.add(DType::Float32, static_cast<size_t>(n));
    h.add(DType::Float32, static_cast<size_t>(n));
    fill_random(h.data<float>(0), static_cast<size_t>(n), 21, -60.0f, 60.0f);
    fill_random(h.data<float>(1), static_cast<size_t>(2 * n), 22, -60.0f, 60.0f);
    for (size_t i = 0; i < special.size() && static_cast<int64_t>(i) < n; ++i) {
      h.data<float>(0)[i] = special[i];
      h.data<float>(1)[2 * i] = special[special.size() - 1 - i];
    }
    h.set_affine(1, 2);
    Outputs out = run_both(kernel("staged_chain"), fn("staged_chain"), h, n, 0, 0);
    EXPECT_EQ(out.compiled[0], out.interpreted[0]) << "n " << n;
    EXPECT_EQ(out.compiled[1], out.interpreted[1]) << "n " << n;
  }
  for (const int64_t inner : {1, 17, 300}) {
    const int64_t outer = 5;
    HostArgs h;
    h.add(DType::Float32, static_cast<size_t>(outer * inner));
    h.add(DType::Float32, static_cast<size_t>(outer * inner));
    fill_random(h.data<float>(0), static_cast<size_t>(outer * inner), 23, -120.0f, 120.0f);
    Outputs out = run_both(kernel("sigmoid_norm"), fn("sigmoid_norm"), h, 0, outer, inner);
    EXPECT_TRUE(floats_close(out.compiled[0], out.interpreted[0], 1e-6)) << "inner " << inner;
  }
}

// Streaming stores (GbcKernelArgs::stream_stores, gbc_stream_store): contiguous full-level outputs
// of kernels whose store pass is memory-bound go through a block in L1, then past the caches, in
// plain pointwise loops and in a reduction's store pass (softmax's exp read from the row cache);
// kernels that compute a costly op while storing keep plain stores. Outputs whose start is not
// aligned to a vector take plain stores up to the first aligned byte and after the last whole
// vector, and nothing outside an output changes.
TEST_F(CpuCodegenTest, StreamingStoresWriteWhatPlainStoresWrite) {
  for (const std::string name : {"int8_wrap", "softmax", "layer_norm"}) {
    const std::string source = codegen::generate_cpu_kernel(kernel(name));
    EXPECT_NE(source.find("gbc_stream_store("), std::string::npos) << source;
    EXPECT_NE(source.find("if (stream) gbc_stream_fence();"), std::string::npos) << source;
  }
  for (const std::string name : {"staged_chain", "half_storage", "pointwise_mix", "per_row_inputs"})
    EXPECT_EQ(codegen::generate_cpu_kernel(kernel(name)).find("gbc_stream_store("), std::string::npos) << name;

  const int64_t outer = 7, inner = 300, n = outer * inner;  // blocks of GBC_BLOCK and a partial one
  for (const int64_t shift : {0, 1, 3, 17}) {               // each output's first element, in elements
    for (const std::string name : {"int8_wrap", "softmax"}) {
      const kir::Kernel& k = kernel(name);
      HostArgs h;
      for (const kir::Buffer& b : k.buffers) h.add(b.dtype, static_cast<size_t>(n + 64));
      for (size_t b = 0; b < k.buffers.size(); ++b) {
        if (!k.buffers[b].is_output) {
          for (size_t i = 0; i < h.bytes(b).size(); ++i) h.bytes(b)[i] = static_cast<unsigned char>(i * 37 % 101);
          if (k.buffers[b].dtype == DType::Float32) fill_random(h.data<float>(b), static_cast<size_t>(n), 31, -20.0f, 20.0f);
          continue;
        }
        h.arg(b).data = h.bytes(b).data() + shift * dtype_size(k.buffers[b].dtype);
      }
      const bool reduction = k.kind == kir::KernelKind::Reduction;
      Outputs out = run_both(k, fn(name), h, reduction ? 0 : n, reduction ? outer : 0, reduction ? inner : 0);
      size_t o = 0;
      for (const kir::Buffer& b : k.buffers) {
        if (!b.is_output) continue;
        const size_t size = static_cast<size_t>(dtype_size(b.dtype)), first = static_cast<size_t>(shift) * size,
                     end = first + static_cast<size_t>(n) * size;
        const std::vector<unsigned char>& got = out.compiled[o], &want = out.interpreted[o];
        ++o;
        if (b.dtype == DType::Float32) {
          for (size_t at = first; at < end; at += 4) {
            float g, w;
            std::memcpy(&g, &got[at], 4);
            std::memcpy(&w, &want[at], 4);
            ASSERT_NEAR(g, w, 1e-6f * (1 + std::fabs(w))) << name << " " << b.name << " shift " << shift << " at " << at;
          }
        } else {
          EXPECT_TRUE(std::equal(got.begin() + static_cast<std::ptrdiff_t>(first), got.begin() + static_cast<std::ptrdiff_t>(end),
                                 want.begin() + static_cast<std::ptrdiff_t>(first)))
              << name << " " << b.name << " shift " << shift;
        }
        // Around the output, the fill run_both gave it.
        for (size_t at = 0; at < first; ++at) ASSERT_EQ(got[at], 0xAB) << name << " " << b.name << " before, shift " << shift;
        for (size_t at = end; at < got.size(); ++at) ASSERT_EQ(got[at], 0xAB) << name << " " << b.name << " after, shift " << shift;
      }
    }
  }
}

// A logsumexp whose max is taken twice over the same float64 cast of a costly float32 value (the
// fuzz campaign of docs/fuzzing.md): the cast is kept in the row cache by the first stage, and the
// third stage must read it from there (its widened-lane path read rc[r] with no r declared, and
// the module did not compile). Compiled on its own, so that a failure names this kernel.
TEST(CpuCodegenRowCache, AStageFoldingAValueAnEarlierStageKeptReadsTheRowCache) {
  kir::Kernel k;
  k.name = "logsumexp_twice";
  k.kind = kir::KernelKind::Reduction;
  k.buffers = {testing::buffer("x", DType::Float32, false), testing::buffer("y", DType::Float64, true)};
  using kir::op;
  auto x = kir::load(0, DType::Float32);
  auto t = kir::cast(op("mul", DType::Float32, {x, op("sigmoid", DType::Float32, {x})}), DType::Float64);
  k.stages = {{kir::Combine::Max, DType::Float64, t},
              {kir::Combine::Sum, DType::Float64, op("exp", DType::Float64, {op("sub", DType::Float64, {t, kir::stage_result(0, DType::Float64)})})},
              {kir::Combine::Max, DType::Float64, t}};
  k.stores = {{1, op("add", DType::Float64, {op("log", DType::Float64, {kir::stage_result(1, DType::Float64)}), kir::stage_result(2, DType::Float64)})}};
  k.buffers[1].level = kir::Level::Outer;
  std::vector<GbcKernelFn> fns = compile_all({k}, "row_cache_reuse");
  ASSERT_EQ(fns.size(), 1u);
  for (const int64_t inner : {1, 37, 300}) {
    const int64_t outer = 5;
    HostArgs h;
    h.add(DType::Float32, static_cast<size_t>(outer * inner));
    h.add(DType::Float64, static_cast<size_t>(outer));
    fill_random(h.data<float>(0), static_cast<size_t>(outer * inner), 41, -10.0f, 10.0f);
    Outputs out = run_both(k, fns[0], h, 0, outer, inner);
    const double* got = reinterpret_cast<const double*>(out.compiled[0].data());
    const double* want = reinterpret_cast<const double*>(out.interpreted[0].data());
    for (int64_t o = 0; o < outer; ++o) EXPECT_NEAR(got[o], want[o], 1e-12 * (1 + std::fabs(want[o]))) << "inner " << inner;
  }
}

// Inputs that every reduced dim broadcasts (specialize.h, BufferSpec::per_row) are loaded once per
// row, before the row's passes, however they are indexed; the kernel agrees with the interpreter
// bit for bit through the staged passes, their block edges and the scalar tails, on one thread and
// two (the float64 sums to rounding: the kernel folds 16 lanes, the interpreter in order).
TEST_F(CpuCodegenTest, InputsConstantAlongTheRowLoadOncePerRow) {
  const std::string source = codegen::generate_cpu_kernel(kernel("per_row_inputs"));
  EXPECT_NE(source.find("    const float t1 = p1[gbc_strided_offset(&a->buffers[1], 2, o)];\n"), std::string::npos) << source;
  EXPECT_NE(source.find("p2[o * p2_s0]"), std::string::npos) << source;
  EXPECT_EQ(source.find("gbc_strided_offsets("), std::string::npos) << source;
  for (const auto& [outer, inner, threads] :
       std::vector<std::tuple<int64_t, int64_t, int32_t>>{{6, 1, 1}, {6, 37, 1}, {12, 300, 2}, {4, 1000, 1}}) {
    HostArgs h = testing::per_row_inputs_args(outer, inner, 3);
    Outputs out = run_both(kernel("per_row_inputs"), fn("per_row_inputs"), h, 0, outer, inner, threads);
    EXPECT_EQ(out.compiled[0], out.interpreted[0]) << outer << "x" << inner;
    const double* got = reinterpret_cast<const double*>(out.compiled[1].data());
    const double* want = reinterpret_cast<const double*>(out.interpreted[1].data());
    for (int64_t o = 0; o < outer; ++o) EXPECT_NEAR(got[o], want[o], 1e-12 * (1.0 + std::fabs(want[o]))) << outer << "x" << inner << " row " << o;
  }
}

TEST_F(CpuCodegenTest, SoftmaxStagesInOneKernel) {
  for (const int64_t inner : {1, 5, 16, 37, 300}) {
    const int64_t outer = 6;
    for (const kir::IndexKind index : {kir::IndexKind::Contiguous, kir::IndexKind::Strided}) {
      const std::string name = index == kir::IndexKind::Contiguous ? "softmax" : "softmax_strided";
      HostArgs h;
      h.add(DType::Float32, static_cast<size_t>(outer * inner));
      h.add(DType::Float32, static_cast<size_t>(outer * inner));
      fill_random(h.data<float>(0), static_cast<size_t>(outer * inner), 7, -30.0f, 30.0f);
      // Strided: rows are columns of an [inner, outer] buffer.
      if (index == kir::IndexKind::Strided) h.set_strided(0, {outer, inner}, {1, outer});
      Outputs out = run_both(kernel(name), fn(name), h, 0, outer, inner);
      EXPECT_TRUE(floats_close(out.compiled[0], out.interpreted[0], 1e-6)) << name << " inner " << inner;
      const float* y = reinterpret_cast<const float*>(out.compiled[0].data());
      for (int64_t o = 0; o < outer; ++o) {
        double sum = 0;
        for (int64_t r = 0; r < inner; ++r) sum += y[o * inner + r];
        EXPECT_NEAR(sum, 1.0, 1e-5) << name << " row " << o;
      }
    }
  }
}

// x broadcast over 2 "heads", [2, 3 * inner] with strides [0, 1]: each row starts at its offset
// and loads as a contiguous run, no per-element offsets.
TEST_F(CpuCodegenTest, StridedRowsStartOncePerRow) {
  const std::string source = codegen::generate_cpu_kernel(kernel("softmax_strided_rows"));
  EXPECT_EQ(source.find("gbc_strided_offsets("), std::string::npos) << source;
  EXPECT_NE(source.find("const int64_t p0_row = gbc_strided_offset(&a->buffers[0], 2, o * inner);"), std::string::npos) << source;
  EXPECT_NE(source.find("p0[p0_row + r]"), std::string::npos) << source;
  for (const int64_t inner : {1, 5, 37, 300}) {
    const int64_t outer = 6;
    HostArgs h;
    h.add(DType::Float32, static_cast<size_t>(outer / 2 * inner));
    h.add(DType::Float32, static_cast<size_t>(outer * inner));
    fill_random(h.data<float>(0), static_cast<size_t>(outer / 2 * inner), 8, -30.0f, 30.0f);
    h.set_strided(0, {2, outer / 2 * inner}, {0, 1});
    Outputs out = run_both(kernel("softmax_strided_rows"), fn("softmax_strided_rows"), h, 0, outer, inner);
    EXPECT_TRUE(floats_close(out.compiled[0], out.interpreted[0], 1e-6)) << "inner " << inner;
    const float* y = reinterpret_cast<const float*>(out.compiled[0].data());
    for (int64_t r = 0; r < outer / 2 * inner; ++r) EXPECT_EQ(y[r], y[r + outer / 2 * inner]) << "heads differ at " << r;
  }
}

// x the transpose of an [inner, outer] buffer: the scratch function copies GBC_TILE_ROWS rows of
// it into a tile (r outside the rows) and reads the tile's rows; rows too long for the scratch
// memory take the plain function, which gathers. Both agree with the interpreter, whatever the
// rows' count against the tile's (a partial last tile) and the threads.
TEST_F(CpuCodegenTest, TransposedInputsReadThroughATile) {
  const std::string source = codegen::generate_cpu_kernel(kernel("layer_norm_transposed"));
  EXPECT_NE(source.find("p0_tile[(o - o0) * inner + r] = p0[o * p0_s0 + r * p0_s1];"), std::string::npos) << source;
  EXPECT_NE(source.find("p0_trow[r]"), std::string::npos) << source;
  for (const auto& [outer, inner, threads] :
       std::vector<std::tuple<int64_t, int64_t, int32_t>>{{9, 37, 1}, {40, 37, 1}, {2500, 37, 2}, {3, 6000, 1}}) {
    HostArgs h = testing::layer_norm_args(outer, inner);
    h.set_affine(0, 1, outer);
    Outputs out = run_both(kernel("layer_norm_transposed"), fn("layer_norm_transposed"), h, 0, outer, inner, threads);
    EXPECT_TRUE(floats_close(out.compiled[0], out.interpreted[0], 1e-5)) << outer << "x" << inner;
    EXPECT_TRUE(floats_close(out.compiled[1], out.interpreted[1], 1e-6)) << outer << "x" << inner;
  }
}

// Softmax's exp(x - max) is computed once per element and kept in a row for the store's pass:
// the cached row function calls gbc_exp in the sum's vector and tail loops only, the plain one in
// the store's loop as well. Rows longer than GBC_ROW_CACHE_BYTES of kept values take the plain
// function; both agree with the interpreter.
TEST_F(CpuCodegenTest, SoftmaxRowCacheAndLongRows) {
  const std::string source = codegen::generate_cpu_kernel(testing::softmax_kernel());
  auto count_exp = [&](size_t begin, size_t end) {
    size_t n = 0;
    for (size_t at = source.find("gbc_exp(", begin); at < end; at = source.find("gbc_exp(", at + 1)) ++n;
    return n;
  };
  const size_t plain = source.find("static void softmax_rows(");
  const size_t cached = source.find("static void softmax_rows_cached(");
  const size_t entry = source.find("extern \"C\" void softmax(");
  ASSERT_TRUE(plain < cached && cached < entry && entry != std::string::npos) << source;
  EXPECT_EQ(count_exp(plain, cached), 3u) << source;
  EXPECT_EQ(count_exp(cached, entry), 2u) << source;

  const int64_t outer = 2, inner = GBC_ROW_CACHE_BYTES / static_cast<int64_t>(sizeof(float)) + 3;
  HostArgs h;
  h.add(DType::Float32, static_cast<size_t>(outer * inner));
  h.add(DType::Float32, static_cast<size_t>(outer * inner));
  fill_random(h.data<float>(0), static_cast<size_t>(outer * inner), 11, -30.0f, 30.0f);
  Outputs out = run_both(kernel("softmax"), fn("softmax"), h, 0, outer, inner, 2);
  // This kernel sums in float32: over 2^18 terms, lanes and the interpreter's sequential fold
  // differ by about 1e-4 of the sum.
  EXPECT_TRUE(floats_close(out.compiled[0], out.interpreted[0], 1e-3));
}

TEST_F(CpuCodegenTest, LayerNormWithPerRowStoreAndParallelRows) {
  const int64_t inner = 37;
  for (const auto& [outer, threads] : std::vector<std::pair<int64_t, int32_t>>{{5, 1}, {2000, 2}}) {
    HostArgs h = testing::layer_norm_args(outer, inner);
    Outputs out = run_both(kernel("layer_norm"), fn("layer_norm"), h, 0, outer, inner, threads);
    EXPECT_TRUE(floats_close(out.compiled[0], out.interpreted[0], 1e-5)) << "outer " << outer;
    EXPECT_TRUE(floats_close(out.compiled[1], out.interpreted[1], 1e-6)) << "outer " << outer;
  }
}

TEST_F(CpuCodegenTest, ArgmaxTakesFirstMaximumAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // Rows of 40: the maximum in a later lane than an equal earlier one, a NaN after the maximum,
  // all -inf, a single maximum in the tail, two NaNs.
  const int64_t inner = 40;
  std::vector<std::vector<float>> rows(5, std::vector<float>(inner, 0.0f));
  rows[0][3] = 7.0f;
  rows[0][19] = 7.0f;
  rows[0][35] = 7.0f;
  rows[1][2] = 9.0f;
  rows[1][30] = nan;
  for (float& v : rows[2]) v = -inf;
  rows[3][38] = 1.0f;
  rows[4][17] = nan;
  rows[4][5] = nan;
  HostArgs h;
  h.add(DType::Float32, rows.size() * inner);
  h.add(DType::Int64, rows.size());
  h.add(DType::Float32, rows.size());
  for (size_t o = 0; o < rows.size(); ++o) std::copy(rows[o].begin(), rows[o].end(), h.data<float>(0) + o * inner);
  Outputs out = run_both(kernel("argmax_float32"), fn("argmax_float32"), h, 0, 5, inner);
  EXPECT_EQ(out.compiled[0], out.interpreted[0]);
  const int64_t* idx = reinterpret_cast<const int64_t*>(out.compiled[0].data());
  EXPECT_EQ(std::vector<int64_t>(idx, idx + 5), (std::vector<int64_t>{3, 30, 0, 38, 5}));
  const float* v = reinterpret_cast<const float*>(out.compiled[1].data());
  EXPECT_EQ(v[0], 7.0f);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_EQ(v[2], -inf);
}

TEST_F(CpuCodegenTest, IntegerReductionsAreExact) {
  const int64_t outer = 4, inner = 45;
  HostArgs h;
  h.add(DType::Int32, static_cast<size_t>(outer * inner));
  h.add(DType::Int64, outer);
  h.add(DType::Int64, outer);
  h.add(DType::Int32, outer);
  h.add(DType::Int32, outer);
  std::mt19937 rng(5);
  for (int64_t i = 0; i < outer * inner; ++i) h.data<int32_t>(0)[i] = static_cast<int32_t>(rng());
  h.data<int32_t>(0)[inner + 44] = std::numeric_limits<int32_t>::min();
  Outputs out = run_both(kernel("int_reduce"), fn("int_reduce"), h, 0, outer, inner);
  for (size_t k = 0; k < out.compiled.size(); ++k) EXPECT_EQ(out.compiled[k], out.interpreted[k]) << "output " << k;
  const int32_t* mn = reinterpret_cast<const int32_t*>(out.compiled[2].data());
  EXPECT_EQ(mn[1], std::numeric_limits<int32_t>::min());

  HostArgs small;
  small.add(DType::Int16, 3 * 20);
  small.add(DType::Int64, 3);
  small.add(DType::Int16, 3);
  for (int i = 0; i < 60; ++i) small.data<int16_t>(0)[i] = static_cast<int16_t>((i * 37) % 11 - 5);
  for (int i = 40; i < 60; ++i) small.data<int16_t>(0)[i] = std::numeric_limits<int16_t>::min();
  Outputs am = run_both(kernel("argmax_int16"), fn("argmax_int16"), small, 0, 3, 20);
  EXPECT_EQ(am.compiled[0], am.interpreted[0]);
  EXPECT_EQ(reinterpret_cast<const int64_t*>(am.compiled[0].data())[2], 0);
}

// ---- the column schedule (reductions over outer dims, specialize.h) ----

// A kernel as specialize_layouts marks it for the column schedule: q steps given per buffer (-1 for
// per-o buffers).
kir::Kernel in_columns(kir::Kernel k, const std::vector<int>& steps) {
  k.name += "_columns";
  k.columns = true;
  for (size_t b = 0; b < k.buffers.size(); ++b) k.buffers[b].col_step = steps.at(b);
  return k;
}

// pointwise_mix_kernel walked in rows: x, y, h step by 1 along a row, w by its stride, t (a
// transpose) by the row count, c is a scalar.
kir::Kernel pointwise_in_rows() { return in_columns(testing::pointwise_mix_kernel(), {1, 2, 2, -1, 1, 1}); }

class CpuColumnsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    kir::Kernel layer_norm = testing::layer_norm_kernel(37);
    layer_norm.buffers[0].index = kir::IndexKind::Affine;  // x read transposed
    kir::Kernel int_reduce = testing::int_reduce_kernel();
    int_reduce.buffers[0].index = kir::IndexKind::Strided;  // x [P, R, Q] in (o, r) order
    int_reduce.buffers[0].rank = 3;
    kir::Kernel argmax = testing::argmax_kernel(DType::Float32);
    argmax.buffers[0].index = kir::IndexKind::Affine;
    kernels_ = {in_columns(layer_norm, {1, 0, 0, 2, -1}), in_columns(int_reduce, {1, -1, -1, -1, -1}),
                in_columns(argmax, {1, -1, -1}), pointwise_in_rows()};
    fns_ = compile_all(kernels_, "cpu_columns_test");
  }
  static std::vector<kir::Kernel> kernels_;
  static std::vector<GbcKernelFn> fns_;
};
std::vector<kir::Kernel> CpuColumnsTest::kernels_;
std::vector<GbcKernelFn> CpuColumnsTest::fns_;

TEST_F(CpuColumnsTest, WalksRowsOutsideColumnsWithoutTheRowFunction) {
  const std::string source = codegen::generate_cpu_kernel(kernels_[0]);
  EXPECT_NE(source.find("static void layer_norm_columns_columns("), std::string::npos) << source;
  EXPECT_EQ(source.find("_rows("), std::string::npos) << source;
  EXPECT_NE(source.find("for (int64_t r = 0; r < inner; ++r) {"), std::string::npos) << source;
}

// layer_norm of the transpose of an [inner, outer] buffer: x at o + r * outer (q step 1), y
// written at o * inner + r (q step inner, at run time), w and b the same for every column.
TEST_F(CpuColumnsTest, LayerNormOfATransposeMatchesInterpreter) {
  const int64_t inner = 37;
  ASSERT_EQ(fns_.size(), kernels_.size());
  for (const auto& [outer, threads] : std::vector<std::pair<int64_t, int32_t>>{{9, 1}, {1500, 1}, {2500, 2}}) {
    HostArgs h = testing::layer_norm_args(outer, inner);
    h.set_affine(0, 1, outer);
    h.arg(3).sq = inner;
    Outputs out = run_both(kernels_[0], fns_[0], h, 0, outer, inner, threads, outer);
    // Sums fold in another order than the interpreter's (r in order per column, in float64).
    EXPECT_TRUE(floats_close(out.compiled[0], out.interpreted[0], 1e-5)) << "outer " << outer;
    EXPECT_TRUE(floats_close(out.compiled[1], out.interpreted[1], 1e-6)) << "outer " << outer;
  }
}

TEST_F(CpuColumnsTest, PointwiseRowsMatchInterpreterBitForBit) {
  for (const auto& [rows, cols, threads] : std::vector<std::tuple<int64_t, int64_t, int32_t>>{{3, 9, 1}, {300, 257, 2}}) {
    HostArgs h = pointwise_mix_args(rows, cols);
    h.arg(1).sq = 2;
    h.arg(2).sq = rows;
    Outputs out = run_both(kernels_[3], fns_[3], h, rows * cols, 0, 0, threads, cols);
    EXPECT_EQ(out.compiled[0], out.interpreted[0]) << rows << "x" << cols;
    EXPECT_EQ(out.compiled[1], out.interpreted[1]) << rows << "x" << cols;
  }
}

// Integer sums, products, min and max over the middle dim of [P, R, Q]: p = 3 blocks of Q columns,
// Q longer than a column block; exact, so bit for bit.
TEST_F(CpuColumnsTest, MiddleDimIntegerReductionsAreExact) {
  const int64_t P = 3, R = 5, Q = GBC_COLUMN_BLOCK + 70;
  for (const int32_t threads : {1, 2}) {
    HostArgs h;
    h.add(DType::Int32, static_cast<size_t>(P * R * Q));
    for (int b = 0; b < 2; ++b) h.add(DType::Int64, static_cast<size_t>(P * Q));
    for (int b = 0; b < 2; ++b) h.add(DType::Int32, static_cast<size_t>(P * Q));
    std::mt19937 rng(9);
    for (int64_t i = 0; i < P * R * Q; ++i) h.data<int32_t>(0)[i] = static_cast<int32_t>(rng());
    h.set_strided(0, {P, Q, R}, {R * Q, 1, Q});
    Outputs out = run_both(kernels_[1], fns_[1], h, 0, P * Q, R, threads, Q);
    for (size_t k = 0; k < out.compiled.size(); ++k) EXPECT_EQ(out.compiled[k], out.interpreted[k]) << "output " << k;
  }
}

// argmax and max over dim 0 of a [R, Q] buffer: the first maximum per column, NaN winning.
TEST_F(CpuColumnsTest, ArgmaxOverColumnsTakesFirstMaximumAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const int64_t R = 40, Q = 20;
  HostArgs h;
  h.add(DType::Float32, static_cast<size_t>(R * Q));
  h.add(DType::Int64, static_cast<size_t>(Q));
  h.add(DType::Float32, static_cast<size_t>(Q));
  fill_random(h.data<float>(0), static_cast<size_t>(R * Q), 21, -1.0f, 1.0f);
  float* x = h.data<float>(0);
  x[3 * Q + 0] = x[19 * Q + 0] = 7.0f;  // column 0: two equal maxima
  x[2 * Q + 1] = 9.0f;
  x[30 * Q + 1] = nan;  // column 1: NaN after the maximum
  x[5 * Q + 2] = nan;
  x[17 * Q + 2] = nan;
  h.set_affine(0, 1, Q);
  Outputs out = run_both(kernels_[2], fns_[2], h, 0, Q, R, 1, Q);
  EXPECT_EQ(out.compiled[0], out.interpreted[0]);
  EXPECT_EQ(out.compiled[1], out.interpreted[1]);
  const int64_t* idx = reinterpret_cast<const int64_t*>(out.compiled[0].data());
  EXPECT_EQ(idx[0], 3);
  EXPECT_EQ(idx[1], 30);
  EXPECT_EQ(idx[2], 5);
}

// ---- every op on every dtype, compiled against the interpreter ----

struct OpCase {
  std::string op;
  unsigned classes;  // 1 bool, 2 integers, 4 floating
};
constexpr unsigned kB = 1, kI = 2, kF = 4, kAny = 7, kNum = 6;

const std::vector<OpCase>& unary_ops() {
  static const std::vector<OpCase> ops = {
      {"neg", kNum},      {"abs", kNum},     {"relu", kNum},       {"sign", kAny},       {"floor", kNum},
      {"ceil", kNum},     {"round", kNum},   {"exp", kF},          {"log", kF},          {"log1p", kF},
      {"expm1", kF},      {"sqrt", kF},      {"rsqrt", kF},        {"sin", kF},          {"cos", kF},
      {"tanh", kF},       {"erf", kF},       {"sigmoid", kF},      {"reciprocal", kF},   {"silu", kF},
      {"gelu", kF},       {"gelu_tanh", kF}, {"logical_not", kAny}};
  return ops;
}
const std::vector<OpCase>& binary_ops() {
  static const std::vector<OpCase> ops = {{"add", kAny},       {"sub", kNum},        {"mul", kAny},       {"div", kF},
                                          {"pow", kNum},       {"maximum", kAny},    {"minimum", kAny},   {"remainder", kNum},
                                          {"eq", kAny},        {"ne", kAny},         {"lt", kAny},        {"le", kAny},
                                          {"gt", kAny},        {"ge", kAny},         {"logical_and", kAny}, {"logical_or", kAny}};
  return ops;
}
unsigned class_of(DType d) { return d == DType::Bool ? kB : is_floating(d) ? kF : kI; }
DType result_of(const std::string& op, DType d) {
  static const std::set<std::string> predicates = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not"};
  return predicates.count(op) ? DType::Bool : d;
}

const std::vector<DType>& compute_dtypes() {
  static const std::vector<DType> d = {DType::Bool,  DType::UInt8, DType::Int8,    DType::Int16,
                                       DType::Int32, DType::Int64, DType::Float32, DType::Float64};
  return d;
}

// Values at each dtype's corners, written into a buffer of that dtype.
std::vector<double> corner_values(DType d) {
  if (d == DType::Bool) return {1, 0, 1};
  if (is_floating(d)) {
    const double inf = std::numeric_limits<double>::infinity();
    return {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.75, -3.25, 1e-3, 0.1, 100.0, -100.0, 65504.0, 7e4,
            1e-6, 1e-40, 3.0, -7.0, 88.7, -88.7, -103.5, 20.0, -20.0, 0.3, inf, -inf, NAN};
  }
  return {0, 1, -1, 2, -2, 3, 7, -7, 100, -100, 127, -128, 255, 32767, -32768, 2147483647, -2147483648.0, 12345, -3};
}
void store_value(HostArgs& h, size_t b, size_t i, DType d, double v) {
  switch (d) {
    case DType::Bool: h.data<bool>(b)[i] = v != 0; break;
    case DType::UInt8: h.data<uint8_t>(b)[i] = static_cast<uint8_t>(static_cast<int64_t>(v)); break;
    case DType::Int8: h.data<int8_t>(b)[i] = static_cast<int8_t>(static_cast<int64_t>(v)); break;
    case DType::Int16: h.data<int16_t>(b)[i] = static_cast<int16_t>(static_cast<int64_t>(v)); break;
    case DType::Int32: h.data<int32_t>(b)[i] = static_cast<int32_t>(static_cast<int64_t>(v)); break;
    case DType::Int64: h.data<int64_t>(b)[i] = static_cast<int64_t>(v); break;
    case DType::Float32: h.data<float>(b)[i] = static_cast<float>(v); break;
    case DType::Float64: h.data<double>(b)[i] = v; break;
    default: FAIL() << "not a compute dtype";
  }
}

// One kernel per dtype and arity: every applicable op of the operand(s) into its own output;
// casts to every dtype as a third kind.
kir::Kernel op_sweep_kernel(DType d, int arity) {
  kir::Kernel k;
  k.name = std::string(arity == 1 ? "unary_" : arity == 2 ? "binary_" : "cast_") + std::string(dtype_name(d));
  k.buffers.push_back(testing::buffer("a", d, false));
  if (arity == 2) k.buffers.push_back(testing::buffer("b", d, false));
  auto a = kir::load(0, d), b = arity == 2 ? kir::load(1, d) : nullptr;
  if (arity == 3) {
    for (DType to : compute_dtypes()) {
      k.buffers.push_back(testing::buffer(std::string(dtype_name(to)), to, true));
      k.stores.push_back({static_cast<int>(k.buffers.size()) - 1, kir::cast(a, to)});
    }
    return k;
  }
  for (const OpCase& c : arity == 1 ? unary_ops() : binary_ops()) {
    if (!(c.classes & class_of(d))) continue;
    const DType r = result_of(c.op, d);
    k.buffers.push_back(testing::buffer(c.op, r, true));
    k.stores.push_back({static_cast<int>(k.buffers.size()) - 1,
                        kir::op(c.op, r, arity == 1 ? std::vector<kir::ExprPtr>{a} : std::vector<kir::ExprPtr>{a, b})});
  }
  return k;
}

TEST(CpuCodegenOps, EveryOpOnEveryDtypeMatchesInterpreterBitForBit) {
  std::vector<kir::Kernel> kernels;
  for (DType d : compute_dtypes())
    for (int arity : {1, 2, 3}) kernels.push_back(op_sweep_kernel(d, arity));
  std::vector<GbcKernelFn> fns = compile_all(kernels, "op_sweep");
  ASSERT_EQ(fns.size(), kernels.size());
  int outputs_checked = 0;
  for (size_t k = 0; k < kernels.size(); ++k) {
    const kir::Kernel& kernel = kernels[k];
    const DType d = kernel.buffers[0].dtype;
    const std::vector<double> v = corner_values(d);
    const bool binary = kernel.name.rfind("binary_", 0) == 0;
    const size_t n = binary ? v.size() * v.size() : v.size();
    HostArgs h;
    for (const kir::Buffer& b : kernel.buffers) h.add(b.dtype, n);
    for (size_t i = 0; i < n; ++i) {
      store_value(h, 0, i, d, v[binary ? i / v.size() : i]);
      if (binary) store_value(h, 1, i, d, v[i % v.size()]);
    }
    Outputs out = run_both(kernel, fns[k], h, static_cast<int64_t>(n), 0, 0);
    size_t o = 0;
    for (const kir::Buffer& b : kernel.buffers) {
      if (!b.is_output) continue;
      EXPECT_EQ(out.compiled[o], out.interpreted[o]) << kernel.name << ": " << b.name;
      ++o;
      ++outputs_checked;
    }
  }
  EXPECT_GT(outputs_checked, 250);
}

// ---- vectorization ----

// The line numbers (1-based) of the `#pragma omp simd` lines from byte `from` on.
std::set<int> simd_pragma_lines(const std::string& source, size_t from) {
  std::set<int> lines;
  int line = 1;
  for (size_t start = 0; start < source.size(); ++line) {
    size_t end = source.find('\n', start);
    if (end == std::string::npos) end = source.size();
    const size_t text = source.find_first_not_of(' ', start);
    if (start >= from && text < end && source.compare(text, 16, "#pragma omp simd") == 0) lines.insert(line);
    start = end + 1;
  }
  return lines;
}

TEST(CpuCodegenVectorization, EveryOmpSimdLoopVectorizes) {
  const std::vector<kir::Kernel> kernels = {testing::pointwise_mix_kernel(), testing::half_kernel(), testing::softmax_kernel(),
                                            testing::softmax_kernel(kir::IndexKind::Strided), testing::layer_norm_kernel(64),
                                            testing::argmax_kernel(DType::Float32), testing::masked_softmax_kernel(),
                                            testing::masked_softmax_kernel(true), strided_rows_softmax_kernel(),
                                            transposed_layer_norm_kernel(),
                                            // The column schedule and the pointwise row walk (a bfloat16 bias
                                            // broadcast over rows: a gather of 16-bit elements did not vectorize).
                                            // Not argmax in columns: its per-o loop only copies, and GCC makes
                                            // that memcpy calls instead of vectors.
                                            in_columns(testing::layer_norm_kernel(64), {1, 0, 0, 1, -1}),
                                            in_columns(testing::half_kernel(), {1, 0, 1, 1, 1}), pointwise_in_rows(),
                                            gelu_layer_norm_kernel()};
  const std::string source = codegen::generate_cpu_source(kernels, "vectorization");
  codegen::CpuCompileOptions options;
  options.extra_flags = {"-fopt-info-vec-optimized"};
  options.use_cache = false;
  CpuCompileResult r = compile_cpu(source, names_of(kernels), options);
  ASSERT_TRUE(r.ok) << r.log;
  const size_t prelude_end = codegen::cpu_kernel_header().size();
  const std::set<int> pragmas = simd_pragma_lines(source, prelude_end);
  ASSERT_GE(pragmas.size(), 10u);
  std::set<int> vectorized;
  const std::regex report(R"(\.cpp:(\d+):\d+: optimized: loop vectorized)");
  for (std::sregex_iterator it(r.log.begin(), r.log.end(), report), end; it != end; ++it)
    vectorized.insert(std::stoi((*it)[1]));
  // GCC names a loop by its header or by the first statement of its body that remains (a store
  // pass whose index `r` no output reads any more starts at its first load).
  auto lines_from = [&](int first, int count) {
    size_t at = 0;
    for (int line = 1; line < first && at != std::string::npos; ++line) at = source.find('\n', at) + 1;
    size_t end = at;
    for (int k = 0; k < count && end != std::string::npos; ++k) end = source.find('\n', end + 1);
    return source.substr(at, end == std::string::npos ? std::string::npos : end - at);
  };
  for (int pragma : pragmas) {
    EXPECT_TRUE(vectorized.count(pragma + 1) || vectorized.count(pragma + 2) || vectorized.count(pragma + 3))
        << "the loop after line " << pragma << " did not vectorize:\n" << lines_from(pragma - 6, 12) << "\nGCC said:\n" << r.log;
  }
}

// Generated sources load none of <cmath>, <cstring>, <cstdlib> (kernel_std.h declares what they
// call, for a smaller precompiled header), and those declarations compute what the standard
// library's functions do, bit for bit.
TEST(KernelStd, GeneratedHeaderHasNoStandardHeadersAndMatchesCmath) {
  const std::string source = "// kernel_std probe\n" + codegen::cpu_kernel_header() + R"(
#if defined(_GLIBCXX_CMATH) || defined(_GLIBCXX_CSTRING) || defined(_GLIBCXX_CSTDLIB)
#error a C++ standard header reached a generated source
#endif
extern "C" void probe(const GbcKernelArgs* a) {
  const float x = *(const float*)a->buffers[0].data;
  const double d = x;
  float* f = (float*)a->buffers[1].data;
  double* g = (double*)a->buffers[2].data;
  const float fs[] = {std::ceil(x), std::cos(x), std::erf(x), std::exp(x), std::expm1(x), std::fabs(x),
                      std::floor(x), std::log(x), std::log1p(x), std::nearbyint(x), std::sin(x), std::sqrt(x),
                      std::tanh(x), std::fmod(x, 0.75f), std::pow(x, 1.5f)};
  const double ds[] = {std::ceil(d), std::cos(d), std::erf(d), std::exp(d), std::expm1(d), std::fabs(d),
                       std::floor(d), std::log(d), std::log1p(d), std::nearbyint(d), std::sin(d), std::sqrt(d),
                       std::tanh(d), std::fmod(d, 0.75), std::pow(d, 1.5)};
  char* scratch = (char*)std::malloc(sizeof fs);
  std::memcpy(scratch, fs, sizeof fs);
  std::memcpy(f, scratch, sizeof fs);
  std::free(scratch);
  std::memcpy(g, ds, sizeof ds);
}
)";
  codegen::CpuCompileOptions options;
  options.use_cache = false;
  CpuCompileResult r = compile_cpu(source, {"probe"}, options);
  ASSERT_TRUE(r.ok) << r.log;
  for (float x : {0.3f, 2.5f, -1.75f, 7.0f, 1e-3f}) {
    float f[15];
    double g[15];
    GbcBufferArg buffers[3] = {};
    buffers[0].data = &x;
    buffers[1].data = f;
    buffers[2].data = g;
    GbcKernelArgs args{};
    args.buffers = buffers;
    r.kernels[0](&args);
    const double d = x;
    // volatile: the host's values come from the library at run time, as the kernel's do.
    volatile float vx = x;
    volatile double vd = d;
    const float fs[] = {std::ceil(vx), std::cos(vx), std::erf(vx), std::exp(vx), std::expm1(vx), std::fabs(vx),
                        std::floor(vx), std::log(vx), std::log1p(vx), std::nearbyint(vx), std::sin(vx),
                        std::sqrt(vx), std::tanh(vx), std::fmod(vx, 0.75f), std::pow(vx, 1.5f)};
    const double ds[] = {std::ceil(vd), std::cos(vd), std::erf(vd), std::exp(vd), std::expm1(vd), std::fabs(vd),
                         std::floor(vd), std::log(vd), std::log1p(vd), std::nearbyint(vd), std::sin(vd),
                         std::sqrt(vd), std::tanh(vd), std::fmod(vd, 0.75), std::pow(vd, 1.5)};
    for (int k = 0; k < 15; ++k) {
      EXPECT_EQ(std::memcmp(&f[k], &fs[k], sizeof(float)), 0) << "float function " << k << " of " << x;
      EXPECT_EQ(std::memcmp(&g[k], &ds[k], sizeof(double)), 0) << "double function " << k << " of " << x;
    }
  }
}

// The widest vectors (bytes) GCC reports for each `#pragma omp simd` loop of one kernel's source
// whose loop runs over reduction lanes (`for (int l = 0; ...`) or over a block's whole lane groups
// (`for (int64_t k = 0; k < mv; ...`: the staged loops that fill a row cache or a block of lanes).
std::vector<int> lane_loop_vector_bytes(const kir::Kernel& kernel) {
  const std::string source = codegen::generate_cpu_source({kernel}, "widths");
  codegen::CpuCompileOptions options;
  options.extra_flags = {"-fopt-info-vec-optimized"};
  options.use_cache = false;
  CpuCompileResult r = compile_cpu(source, {kernel.name}, options);
  EXPECT_TRUE(r.ok) << r.log;
  std::map<int, int> widest;
  const std::regex report(R"(\.cpp:(\d+):\d+: optimized: loop vectorized using (\d+) byte vectors)");
  for (std::sregex_iterator it(r.log.begin(), r.log.end(), report), end; it != end; ++it) {
    int& w = widest[std::stoi((*it)[1])];
    w = std::max(w, std::stoi((*it)[2]));
  }
  std::vector<std::string> lines = {""};
  for (char c : source) {
    if (c == '\n')
      lines.emplace_back();
    else
      lines.back().push_back(c);
  }
  std::vector<int> out;
  for (size_t n = 1; n + 1 < lines.size(); ++n) {
    if (lines[n - 1].find("#pragma omp simd") == std::string::npos) continue;
    if (lines[n].find("for (int l = 0;") == std::string::npos && lines[n].find("for (int64_t k = 0; k < mv;") == std::string::npos)
      continue;
    const int line = static_cast<int>(n) + 1;  // 1-based line of the loop
    out.push_back(std::max(widest[line], widest[line + 1]));
  }
  return out;
}

// A mask's 1-byte loads next to floats: GCC sizes the vectors by the narrowest type, and with 16
// lanes the masked softmax ran 16-byte vectors (4 floats) where the plain one runs the widest
// (issue 19). Each lane loop of the masked kernels must use vectors as wide as the plain softmax's.
TEST(CpuCodegenVectorization, MaskedLaneLoopsUseTheWidestVectors) {
  const std::vector<int> plain = lane_loop_vector_bytes(testing::softmax_kernel());
  ASSERT_FALSE(plain.empty());
  const int widest = *std::max_element(plain.begin(), plain.end());
  for (bool number_fill : {false, true}) {
    const std::vector<int> masked = lane_loop_vector_bytes(testing::masked_softmax_kernel(number_fill));
    // Two stages in the plain and the row-cached function, and the sum's exp computed in a loop
    // of its own in both (into the row cache, or a block of lanes) before it is folded.
    ASSERT_EQ(masked.size(), 6u) << "two stages, each in the plain and the row-cached function, and the sum's fills";
    // GBC_LANES_WIDE's 32 lanes of bytes are one 32-byte vector: the widest with AVX2; with
    // AVX-512 (64-byte float vectors in the plain softmax) GCC sizes the loops that load the mask
    // at 32 bytes, and more lanes would change the fold order between machines (kernel_support.h).
    for (int bytes : masked) {
      EXPECT_GE(bytes, std::min(widest, 32)) << (number_fill ? "number fill" : "tensor fill");
      EXPECT_LE(bytes, widest) << (number_fill ? "number fill" : "tensor fill");
    }
  }
}

}  // namespace
}  // namespace gbc
