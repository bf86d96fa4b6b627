// gbc's generated CUDA kernels run on the CPU, under the emulation of cuda_emulation.h, and compute
// what the interpreter computes: every reduction schedule (cached rows in registers, vector steps,
// scalar elements, rows split across blocks with the parts folded by the last block), the launch
// shapes cuda_launch_shape picks, misaligned and odd-sized rows, argmax ties, the workspace a split
// leaves ready for the next launch, and the injected faults (they must reach CUDA code too). This
// is what keeps the CUDA schedules right between the sessions that have a GPU; the GPU run
// (ci/gpu_checks.sh) adds the device's own scheduling and speed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "compiler/codegen/cpu_compiler.h"
#include "compiler/codegen/cuda_codegen.h"
#include "compiler/ir/kernel_prelude.h"
#include "compiler/kernel/interpreter.h"
#include "tests/codegen/codegen_test_util.h"

namespace gbc {
namespace {

using testing::fill_random;
using testing::HostArgs;
using testing::floats_close;

std::string read_source(const std::string& relative) {
  std::ifstream in(std::string(GBCHECK_SOURCE_DIR) + "/" + relative);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

using EmuLaunch = void (*)(void* kernel, const GbcCudaKernelArgs* args, unsigned grid, unsigned block_x, unsigned block_y);

// The kernels' CUDA source compiled for the host after the emulation header.
struct EmulatedModule {
  std::map<std::string, void*> kernels;
  EmuLaunch launch = nullptr;
};

EmulatedModule build(const std::vector<kir::Kernel>& kernels) {
  std::string source = read_source("tests/codegen/cuda_emulation.h");
  source += codegen::generate_cuda_source(kernels, "cuda_emulation_test");
  source +=
      "\nextern \"C\" void gbc_emu_launch(void* kernel, const GbcCudaKernelArgs* args, unsigned grid, unsigned bx, "
      "unsigned by) {\n  gbc_emu_launch_kernel(reinterpret_cast<void (*)(GbcCudaKernelArgs)>(kernel), *args, grid, bx, by);\n}\n";
  std::vector<std::string> names;
  for (const kir::Kernel& k : kernels) names.push_back(k.name);
  names.push_back("gbc_emu_launch");
  codegen::CpuCompileOptions options;
  options.extra_flags = {"-I" + std::string(GBCHECK_SOURCE_DIR), "-w"};
  codegen::CpuCompileResult r = codegen::compile_cpu(source, names, options);
  EXPECT_TRUE(r.ok) << r.log;
  EmulatedModule m;
  if (!r.ok) return m;
  for (size_t k = 0; k < kernels.size(); ++k) m.kernels[kernels[k].name] = reinterpret_cast<void*>(r.kernels[k]);
  m.launch = reinterpret_cast<EmuLaunch>(r.kernels.back());
  return m;
}


// What one emulated launch used, for the assertions about schedules.
struct Launched {
  codegen::CudaLaunchShape shape;
  std::vector<std::vector<unsigned char>> interpreted, emulated;  // per output buffer
};

// Runs the interpreter, then the emulated CUDA kernel (launch shape from cuda_launch_shape with
// `sms` multiprocessors; a zeroed workspace when split), on the same inputs; `launches` emulated
// launches in a row (a split leaves its counters ready for the next one).
Launched run_both(const EmulatedModule& m, const kir::Kernel& k, HostArgs& host, int64_t numel, int64_t outer,
                  int64_t inner, int sms, int launches = 1, const kir::Kernel* reference = nullptr) {
  Launched out;
  GbcKernelArgs args = host.args(numel, outer, inner);
  interpret_kernel(reference ? *reference : k, args);
  for (size_t b = 0; b < k.buffers.size(); ++b) {
    if (!k.buffers[b].is_output) continue;
    out.interpreted.push_back(host.bytes(b));
  }
  GbcCudaKernelArgs cuda = codegen::make_cuda_args(k, args);
  out.shape = codegen::cuda_launch_shape(k, cuda, sms);
  std::vector<unsigned char> workspace;
  if (out.shape.splits > 1) {
    workspace.assign(codegen::cuda_split_workspace_bytes(outer, out.shape.splits), 0);
    cuda.splits = out.shape.splits;
    cuda.workspace = workspace.data();
  }
  for (int l = 0; l < launches; ++l) {
    for (size_t b = 0; b < k.buffers.size(); ++b)
      if (k.buffers[b].is_output) std::fill(host.bytes(b).begin(), host.bytes(b).end(), 0xAB);
    m.launch(m.kernels.at(k.name), &cuda, out.shape.grid, out.shape.block_x, out.shape.block_y);
  }
  for (size_t b = 0; b < k.buffers.size(); ++b)
    if (k.buffers[b].is_output) out.emulated.push_back(host.bytes(b));
  if (out.shape.splits > 1)
    for (int64_t o = 0; o < outer; ++o)
      EXPECT_EQ(reinterpret_cast<unsigned*>(workspace.data())[o], 0u) << "row " << o << "'s counter is left for the next launch";
  return out;
}

class CudaEmulation : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    kernels_ = {testing::softmax_kernel(), testing::softmax_kernel(kir::IndexKind::Strided), testing::layer_norm_kernel(37),
                testing::argmax_kernel(DType::Float32), testing::int_reduce_kernel(), testing::mean_kernel(),
                testing::pointwise_mix_kernel(), testing::half_kernel(), testing::per_row_inputs_kernel(),
                testing::exp_gate_kernel(), testing::exp_gate_kernel(true), testing::masked_softmax_kernel()};
    module_ = build(kernels_);
  }
  static const kir::Kernel& kernel(const std::string& name) {
    for (const kir::Kernel& k : kernels_)
      if (k.name == name) return k;
    throw std::out_of_range(name);
  }
  void SetUp() override {
    if (!module_.launch) GTEST_SKIP() << "the emulated module did not build (see the first test's failure)";
  }

  static std::vector<kir::Kernel> kernels_;
  static EmulatedModule module_;
};
std::vector<kir::Kernel> CudaEmulation::kernels_;
EmulatedModule CudaEmulation::module_;

HostArgs softmax_args(int64_t outer, int64_t inner, size_t offset = 0) {
  HostArgs h;
  h.add(DType::Float32, static_cast<size_t>(outer * inner) + offset);
  h.add(DType::Float32, static_cast<size_t>(outer * inner) + offset);
  fill_random(h.data<float>(0), static_cast<size_t>(outer * inner) + offset, 7, -30.0f, 30.0f);
  // A misaligned call: the buffers start one element into their storage.
  h.arg(0).data = h.data<float>(0) + offset;
  h.arg(1).data = h.data<float>(1) + offset;
  return h;
}

// Rows of every length class, one schedule each: cached in registers (aligned, up to 8 elements per
// thread), vector steps (longer than 8 per thread of 1024), scalar (odd length or misaligned).
TEST_F(CudaEmulation, SoftmaxMatchesTheInterpreterUnderEverySchedule) {
  struct Case {
    int64_t outer, inner;
    size_t offset;
  };
  for (const Case& c : std::vector<Case>{{6, 1}, {5, 16}, {9, 37}, {4, 64}, {3, 1000}, {3, 1000, 1}, {2, 9000}, {1, 16384}}) {
    SCOPED_TRACE("outer " + std::to_string(c.outer) + " inner " + std::to_string(c.inner) + " offset " +
                 std::to_string(c.offset));
    HostArgs h = softmax_args(c.outer, c.inner, c.offset);
    Launched out = run_both(module_, kernel("softmax"), h, 0, c.outer, c.inner, 132);
    EXPECT_EQ(out.shape.splits, 1) << "softmax has two stages: its rows are never split";
    // Rows are folded in another order than the interpreter's sequential one.
    std::vector<unsigned char> got(out.emulated[0].begin() + 4 * c.offset, out.emulated[0].end());
    std::vector<unsigned char> want(out.interpreted[0].begin() + 4 * c.offset, out.interpreted[0].end());
    EXPECT_TRUE(floats_close(got, want, 1e-5, 1e-12));
  }
}

// Values kept between passes in an input's registers (Cached schedule) give what computing them
// again gives, in every schedule: rows cached, longer ones, misaligned ones.
TEST_F(CudaEmulation, ValuesKeptInRegistersMatchTheInterpreter) {
  for (const std::string name : {"exp_gate", "exp_plus_x", "masked_softmax"}) {
    const bool masked = name == "masked_softmax";
    for (const auto& [outer, inner, offset] : std::vector<std::tuple<int64_t, int64_t, size_t>>{{5, 1000, 0}, {3, 1000, 1}, {2, 9000, 0}, {7, 64, 0}}) {
      SCOPED_TRACE(name + " " + std::to_string(outer) + "x" + std::to_string(inner) + " offset " + std::to_string(offset));
      const size_t n = static_cast<size_t>(outer * inner) + offset;
      HostArgs h;
      h.add(DType::Float32, n);
      fill_random(h.data<float>(0), n, 17, -3.0f, 3.0f);
      h.arg(0).data = h.data<float>(0) + offset;
      if (masked) {
        h.add(DType::Bool, static_cast<size_t>(inner));
        for (int64_t r = 0; r < inner; ++r) h.data<bool>(1)[r] = r % 3 != 1;
        h.set_affine(1, 0, 1);
        h.add(DType::Float32, 1);
        h.data<float>(2)[0] = -30.0f;  // log(p) stays finite
      } else if (name == "exp_gate") {
        h.add(DType::Float32, n);
        fill_random(h.data<float>(1), n, 18, 0.5f, 1.5f);
        h.arg(1).data = h.data<float>(1) + offset;
      }
      const int outputs = masked ? 2 : 1;
      for (int k = 0; k < outputs; ++k) {
        h.add(DType::Float32, n);
        h.arg(h.arg_count() - 1).data = h.data<float>(h.arg_count() - 1) + offset;
      }
      Launched out = run_both(module_, kernel(name), h, 0, outer, inner, 132);
      for (int k = 0; k < outputs; ++k) {
        std::vector<unsigned char> got(out.emulated[k].begin() + 4 * offset, out.emulated[k].end());
        std::vector<unsigned char> want(out.interpreted[k].begin() + 4 * offset, out.interpreted[k].end());
        EXPECT_TRUE(floats_close(got, want, 1e-5, 1e-12)) << "output " << k;
      }
    }
  }
}

TEST_F(CudaEmulation, StridedRowsTakeTheScalarSchedule) {
  const int64_t outer = 3, inner = 40;
  HostArgs h = softmax_args(outer, inner);
  h.set_strided(0, {outer, inner}, {1, outer});  // rows are columns of an [inner, outer] buffer
  Launched out = run_both(module_, kernel("softmax_strided"), h, 0, outer, inner, 132);
  EXPECT_TRUE(floats_close(out.emulated[0], out.interpreted[0], 1e-5, 1e-12));
}

TEST_F(CudaEmulation, LayerNormRowStatsAndAffineWeights) {
  const int64_t inner = 37;  // the kernel divides by 37: rows of that length only
  for (const int64_t outer : {1, 5, 70}) {
    HostArgs h = testing::layer_norm_args(outer, inner);
    Launched out = run_both(module_, kernel("layer_norm"), h, 0, outer, inner, 132);
    EXPECT_TRUE(floats_close(out.emulated[0], out.interpreted[0], 1e-5, 1e-6)) << "outer " << outer;
    EXPECT_TRUE(floats_close(out.emulated[1], out.interpreted[1], 1e-6, 1e-7)) << "outer " << outer;
  }
}

// Inputs that every reduced dim broadcasts (BufferSpec::per_row) read once per row, in every row
// schedule of the CUDA kernels.
TEST_F(CudaEmulation, InputsConstantAlongTheRowReadPerRow) {
  for (const auto& [outer, inner] : std::vector<std::pair<int64_t, int64_t>>{{6, 1}, {6, 37}, {9, 64}, {3, 3000}}) {
    SCOPED_TRACE(std::to_string(outer) + "x" + std::to_string(inner));
    HostArgs h = testing::per_row_inputs_args(outer, inner, 3);
    Launched out = run_both(module_, kernel("per_row_inputs"), h, 0, outer, inner, 132);
    EXPECT_TRUE(floats_close(out.emulated[0], out.interpreted[0], 1e-6, 1e-7));
    const double* got = reinterpret_cast<const double*>(out.emulated[1].data());
    const double* want = reinterpret_cast<const double*>(out.interpreted[1].data());
    for (int64_t o = 0; o < outer; ++o) EXPECT_NEAR(got[o], want[o], 1e-12 * (1.0 + std::fabs(want[o]))) << "row " << o;
  }
}

TEST_F(CudaEmulation, ArgmaxTakesTheFirstMaximumInEverySchedule) {
  for (const int64_t inner : {40, 1000, 1001}) {
    const int64_t outer = 3;
    HostArgs h;
    h.add(DType::Float32, static_cast<size_t>(outer * inner));
    h.add(DType::Int64, static_cast<size_t>(outer));
    h.add(DType::Float32, static_cast<size_t>(outer));
    float* x = h.data<float>(0);
    for (int64_t i = 0; i < outer * inner; ++i) x[i] = static_cast<float>(i % 7);  // ties everywhere
    x[inner + inner / 2] = std::numeric_limits<float>::quiet_NaN();
    x[2 * inner + 5] = 100.0f;
    x[2 * inner + inner - 1] = 100.0f;
    Launched out = run_both(module_, kernel("argmax_float32"), h, 0, outer, inner, 132);
    EXPECT_EQ(out.emulated[0], out.interpreted[0]) << "inner " << inner;
  }
}

TEST_F(CudaEmulation, IntegerFoldsAreExact) {
  for (const int64_t inner : {33, 512, 4000}) {
    const int64_t outer = 4;
    HostArgs h;
    h.add(DType::Int32, static_cast<size_t>(outer * inner));
    h.add(DType::Int64, static_cast<size_t>(outer));
    h.add(DType::Int64, static_cast<size_t>(outer));
    h.add(DType::Int32, static_cast<size_t>(outer));
    h.add(DType::Int32, static_cast<size_t>(outer));
    std::mt19937 rng(3);
    for (int64_t i = 0; i < outer * inner; ++i) h.data<int32_t>(0)[i] = static_cast<int32_t>(rng() % 7) - 3;
    Launched out = run_both(module_, kernel("int_reduce"), h, 0, outer, inner, 132);
    for (size_t b = 0; b < out.emulated.size(); ++b) EXPECT_EQ(out.emulated[b], out.interpreted[b]) << "inner " << inner;
  }
}

HostArgs mean_args(int64_t outer, int64_t inner, size_t offset = 0) {
  HostArgs h;
  h.add(DType::Float32, static_cast<size_t>(outer * inner) + offset);
  h.add(DType::Float32, static_cast<size_t>(outer));
  fill_random(h.data<float>(0), static_cast<size_t>(outer * inner) + offset, 5);
  h.arg(0).data = h.data<float>(0) + offset;
  h.scalars = {static_cast<double>(inner)};
  return h;
}

// Fewer rows than multiprocessors, each long: the rows split across blocks, the last block of each
// row folds the parts; twice in a row, as the counters must be ready again.
TEST_F(CudaEmulation, FewLongRowsSplitAcrossBlocks) {
  struct Case {
    int64_t outer, inner;
    size_t offset;
    int sms;
  };
  for (const Case& c : std::vector<Case>{{1, 20000, 0, 2}, {3, 20000, 0, 8}, {1, 20001, 0, 2}, {2, 17000, 1, 4}}) {
    SCOPED_TRACE("outer " + std::to_string(c.outer) + " inner " + std::to_string(c.inner));
    HostArgs h = mean_args(c.outer, c.inner, c.offset);
    Launched out = run_both(module_, kernel("mean_rows"), h, 0, c.outer, c.inner, c.sms, 2);
    EXPECT_GE(out.shape.splits, 2);
    EXPECT_EQ(out.shape.block_y, 1u);
    EXPECT_TRUE(floats_close(out.emulated[0], out.interpreted[0], 1e-4, 1e-6));
  }
  // As many rows as multiprocessors: one block per row, no split.
  HostArgs h = mean_args(2, 20000);
  Launched many = run_both(module_, kernel("mean_rows"), h, 0, 2, 20000, 2);
  EXPECT_EQ(many.shape.splits, 1);
  EXPECT_TRUE(floats_close(many.emulated[0], many.interpreted[0], 1e-4, 1e-6));
}

// Kernels of one row class (kir::Kernel::cuda_rows, what the runtime compiles on CUDA) compute
// what the interpreter computes for calls of their class, under cuda_launch_shape's launch: short
// and cached rows, long rows (vector), odd-length or misaligned rows (scalar), and few long rows
// (split); each call's class is the one cuda_call_row_class tells, as the launcher checks.
TEST(CudaEmulationRowClasses, EachClassKernelMatchesTheInterpreter) {
  using R = kir::CudaRows;
  std::vector<kir::Kernel> kernels;
  for (const R rows : {R::Scalar, R::Vector, R::Cached}) kernels.push_back(testing::of_row_class(testing::softmax_kernel(), rows));
  for (const R rows : {R::Scalar, R::Vector, R::Cached, R::SplitScalar, R::SplitVector})
    kernels.push_back(testing::of_row_class(testing::mean_kernel(), rows));
  const EmulatedModule m = build(kernels);
  ASSERT_NE(m.launch, nullptr);
  struct Case {
    bool softmax;
    int64_t outer, inner;
    size_t offset;
    int sms;
    R rows;  // the class the call must take
  };
  const std::vector<Case> cases = {
      {true, 6, 16, 0, 132, R::Cached},        {true, 3, 1000, 0, 132, R::Cached},  {true, 2, 9000, 0, 132, R::Cached},
      {true, 2, 20000, 0, 132, R::Vector},     {true, 3, 1001, 0, 132, R::Scalar},  {true, 3, 1000, 1, 132, R::Scalar},
      {true, 2, 20000, 1, 132, R::Scalar},     {false, 4, 1000, 0, 132, R::Cached}, {false, 2, 20000, 0, 2, R::Vector},
      {false, 4, 1001, 0, 132, R::Scalar},     {false, 1, 20000, 0, 2, R::SplitVector},
      {false, 3, 20000, 0, 8, R::SplitVector}, {false, 1, 20001, 0, 2, R::SplitScalar},
      {false, 2, 17000, 1, 4, R::SplitScalar}, {false, 1, 16384, 0, 2, R::SplitVector}};
  for (const Case& c : cases) {
    const kir::Kernel base = c.softmax ? testing::softmax_kernel() : testing::mean_kernel();
    SCOPED_TRACE(base.name + " outer " + std::to_string(c.outer) + " inner " + std::to_string(c.inner) + " offset " +
                 std::to_string(c.offset) + " sms " + std::to_string(c.sms));
    HostArgs h = c.softmax ? softmax_args(c.outer, c.inner, c.offset) : mean_args(c.outer, c.inner, c.offset);
    const kir::CudaRows rows = codegen::cuda_call_row_class(base, codegen::cuda_row_layout(base),
                                                            codegen::make_cuda_args(base, h.args(0, c.outer, c.inner)), c.sms);
    EXPECT_EQ(kir::cuda_rows_name(rows), std::string(kir::cuda_rows_name(c.rows)));
    const kir::Kernel k = testing::of_row_class(base, rows);
    Launched out = run_both(m, k, h, 0, c.outer, c.inner, c.sms, 2);
    EXPECT_EQ(out.shape.splits > 1, rows == R::SplitScalar || rows == R::SplitVector);
    // Softmax's outputs are offset as its input; the interpreter folds in another order.
    const size_t skip = c.softmax ? 4 * c.offset : 0;
    std::vector<unsigned char> got(out.emulated[0].begin() + skip, out.emulated[0].end());
    std::vector<unsigned char> want(out.interpreted[0].begin() + skip, out.interpreted[0].end());
    EXPECT_TRUE(floats_close(got, want, 1e-4, 1e-6));
  }
}

std::vector<float> as_floats(const std::vector<unsigned char>& bytes, DType dtype) {
  std::vector<float> out;
  if (dtype == DType::Float32) {
    out.resize(bytes.size() / 4);
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
  }
  const uint16_t* h = reinterpret_cast<const uint16_t*>(bytes.data());
  for (size_t i = 0; i < bytes.size() / 2; ++i)
    out.push_back(dtype == DType::Float16 ? gbc_f16_to_f32(h[i]) : gbc_bf16_to_f32(h[i]));
  return out;
}

// Pointwise kernels: the vector path (aligned, V elements per access) and the scalar tail.
TEST_F(CudaEmulation, PointwiseVectorAndScalarPaths) {
  const kir::Kernel& k = kernel("half_storage");
  for (const int64_t n : {1, 13, 1024, 4099}) {
    HostArgs h;
    for (const kir::Buffer& b : k.buffers) h.add(b.dtype, static_cast<size_t>(n));
    std::mt19937 rng(static_cast<uint32_t>(n));
    std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
    for (int64_t i = 0; i < n; ++i) {
      h.data<uint16_t>(0)[i] = gbc_f32_to_f16(dist(rng));
      h.data<uint16_t>(1)[i] = gbc_f32_to_bf16(dist(rng));
    }
    Launched out = run_both(module_, k, h, n, 0, 0, 4);
    size_t output = 0;
    for (const kir::Buffer& b : k.buffers) {
      if (!b.is_output) continue;
      const std::vector<float> got = as_floats(out.emulated[output], b.dtype), want = as_floats(out.interpreted[output], b.dtype);
      ++output;
      for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-2 * std::fabs(want[i]) + 1e-3) << b.name << "[" << i << "]";
    }
  }
}

// The injected faults live in the CUDA code generator too: a fault kernel differs from the correct
// one's result and matches the interpreter's fault.
TEST(CudaEmulationFaults, ReduceBoundAndFp16AccumReachCudaKernels) {
  for (const InjectedFault fault : {InjectedFault::ReduceBound, InjectedFault::Fp16Accum}) {
    kir::Kernel correct = testing::mean_kernel();
    kir::Kernel faulty = correct;
    faulty.name = "mean_faulty";
    faulty.fault = fault;
    const EmulatedModule m = build({faulty});
    ASSERT_NE(m.launch, nullptr);
    for (const auto& [outer, inner, sms] : std::vector<std::tuple<int64_t, int64_t, int>>{{4, 1000, 132}, {1, 20000, 2}}) {
      SCOPED_TRACE(fault_name(fault) + " outer " + std::to_string(outer) + " inner " + std::to_string(inner));
      HostArgs h = mean_args(outer, inner);
      fill_random(h.data<float>(0), static_cast<size_t>(outer * inner), 9, 0.5f, 1.5f);  // sums inexact in float16
      Launched with_fault = run_both(m, faulty, h, 0, outer, inner, sms, 1, &faulty);
      Launched without = run_both(m, faulty, h, 0, outer, inner, sms, 1, &correct);
      EXPECT_NE(with_fault.emulated[0], without.interpreted[0]) << "the fault changes the result";
      // (The interpreter's sequential float32 sum of 20000 terms is off by about 1e-4.)
      if (fault == InjectedFault::ReduceBound)
        EXPECT_TRUE(floats_close(with_fault.emulated[0], with_fault.interpreted[0], 1e-3));
    }
  }
}

TEST(CudaEmulationFaults, CrashFaultWritesThroughANullPointerInCudaCode) {
  kir::Kernel k = testing::half_kernel();
  EXPECT_EQ(codegen::generate_cuda_kernel(k).find("gbc_null"), std::string::npos);
  k.fault = InjectedFault::Crash;
  // half_storage computes sigmoid (kCrashFaultOp); the kernel must fault on the device.
  ASSERT_TRUE(kir::computes_op(k, kCrashFaultOp));
  EXPECT_NE(codegen::generate_cuda_kernel(k).find("*gbc_null = 1;"), std::string::npos);
}

}  // namespace
}  // namespace gbc
