// CUDA code generation without a GPU: the sources of the test kernels compile to PTX for sm_80 and
// sm_90 with NVRTC (skipped only when NVRTC is absent), the PTX has the vector accesses and warp
// shuffles the generator meant, and the host side of the calling convention (arguments, launch
// shapes, limits) holds its contract.
#include "compiler/codegen/cuda_codegen.h"

#include <gtest/gtest.h>

#include <cstring>
#include <regex>

#include "compiler/ir/diagnostics.h"
#include "tests/codegen/codegen_test_util.h"

namespace gbc::codegen {
namespace {

std::vector<kir::Kernel> test_kernels() {
  return {testing::pointwise_mix_kernel(),
          testing::half_kernel(),
          testing::int8_kernel(),
          testing::softmax_kernel(),
          testing::softmax_kernel(kir::IndexKind::Strided),
          testing::layer_norm_kernel(37),
          testing::argmax_kernel(DType::Float32),
          testing::argmax_kernel(DType::Int16),
          testing::int_reduce_kernel()};
}

// The body of `.entry name` in PTX text.
std::string entry(const std::string& ptx, const std::string& name) {
  const size_t begin = ptx.find(".entry " + name + "(");
  if (begin == std::string::npos) return "";
  const size_t end = ptx.find(".entry ", begin + 1);
  return ptx.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

class CudaPtxTest : public ::testing::TestWithParam<int> {};

TEST_P(CudaPtxTest, TestKernelsCompileToPtx) {
  if (!NvrtcCompiler::get().available()) GTEST_SKIP() << "NVRTC not present: " << NvrtcCompiler::get().unavailable_reason();
  const std::vector<kir::Kernel> kernels = test_kernels();
  const std::string source = generate_cuda_source(kernels, "cuda_codegen_test");
  CudaPtx ptx = compile_cuda_ptx(source, GetParam(), /*use_cache=*/false);
  ASSERT_TRUE(ptx.build.ok) << ptx.build.log;
  const std::string& text = ptx.build.binary;
  EXPECT_NE(text.find(".target sm_" + std::to_string(GetParam())), std::string::npos);
  for (const kir::Kernel& k : kernels) EXPECT_FALSE(entry(text, k.name).empty()) << k.name;

  // 16-byte vector loads and stores in the contiguous fast path.
  const std::string pointwise = entry(text, "pointwise_mix");
  EXPECT_TRUE(std::regex_search(pointwise, std::regex(R"(ld\.global(\.nc)?\.v4\.f32)"))) << pointwise;
  EXPECT_TRUE(std::regex_search(pointwise, std::regex(R"(st\.global\.v4\.f32)")));
  EXPECT_TRUE(std::regex_search(entry(text, "half_storage"), std::regex(R"(ld\.global(\.nc)?\.v4\.(u16|b16|u32|b32))")));
  // Row folds through warp shuffles; reductions keep their stages in one kernel.
  for (const char* name : {"softmax", "layer_norm", "argmax_float32", "int_reduce"}) {
    const std::string body = entry(text, name);
    EXPECT_NE(body.find("shfl.sync.bfly"), std::string::npos) << name;
    EXPECT_NE(body.find("bar.sync"), std::string::npos) << name << ": rows of several warps meet in shared memory";
  }
  // NVRTC's warnings about unused prelude functions are silenced, nothing else is expected.
  EXPECT_EQ(ptx.build.log.find("warning"), std::string::npos) << ptx.build.log;
}

INSTANTIATE_TEST_SUITE_P(Archs, CudaPtxTest, ::testing::Values(80, 90));

TEST(CudaCodegen, PtxIsCachedOnDisk) {
  if (!NvrtcCompiler::get().available()) GTEST_SKIP() << "NVRTC not present: " << NvrtcCompiler::get().unavailable_reason();
  const std::string source = generate_cuda_source({testing::half_kernel()}, "cache_test");
  CudaPtx first = compile_cuda_ptx(source, 80);
  ASSERT_TRUE(first.build.ok) << first.build.log;
  CudaPtx second = compile_cuda_ptx(source, 80);
  ASSERT_TRUE(second.build.ok);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.build.binary, first.build.binary);
}

TEST(CudaCodegen, CompileErrorsReturnNvrtcsLog) {
  if (!NvrtcCompiler::get().available()) GTEST_SKIP() << "NVRTC not present: " << NvrtcCompiler::get().unavailable_reason();
  CudaPtx ptx = compile_cuda_ptx("extern \"C\" __global__ void k() { undeclared_thing(); }\n", 80, false);
  EXPECT_FALSE(ptx.build.ok);
  EXPECT_NE(ptx.build.log.find("undeclared_thing"), std::string::npos) << ptx.build.log;
}

TEST(CudaCodegen, RowLayoutsNameTheVectorBuffersAndSplittableKernels) {
  const CudaRowLayout softmax = cuda_row_layout(testing::softmax_kernel());
  EXPECT_EQ(softmax.width, 4);
  EXPECT_EQ(softmax.elements, 32) << "128 bytes of registers for the one cached float32 input";
  EXPECT_EQ(softmax.items(), 8);
  EXPECT_EQ(softmax.loaded, std::vector<int>{0});
  EXPECT_EQ(softmax.stored, std::vector<int>{1});
  EXPECT_FALSE(softmax.splittable);
  const CudaRowLayout strided = cuda_row_layout(testing::softmax_kernel(kir::IndexKind::Strided));
  EXPECT_TRUE(strided.loaded.empty()) << "strided rows are read element by element";
  const CudaRowLayout mean = cuda_row_layout(testing::mean_kernel());
  EXPECT_TRUE(mean.splittable);
  EXPECT_TRUE(mean.stored.empty()) << "per-row outputs are stored once per row";
  EXPECT_FALSE(cuda_row_layout(testing::argmax_kernel(DType::Float32)).splittable) << "argmax folds (value, index)";
  kir::Kernel two_inputs = testing::softmax_kernel();
  two_inputs.buffers.push_back(testing::buffer("z", DType::Float32, false));
  EXPECT_EQ(cuda_row_layout(two_inputs).elements, 16) << "two cached inputs share the registers";
  EXPECT_EQ(cuda_row_layout(testing::layer_norm_kernel(4)).elements, 32) << "w and b are not cached (affine)";
  EXPECT_EQ(cuda_max_row_threads(32), 512u);
  EXPECT_EQ(cuda_max_row_threads(8), 1024u);
  EXPECT_FALSE(cuda_row_layout(testing::int_reduce_kernel()).splittable) << "four stages";
  EXPECT_EQ(cuda_row_layout(testing::half_kernel()).width, 1) << "pointwise kernels have no row layout";
  const std::string split = generate_cuda_kernel(testing::mean_kernel());
  EXPECT_NE(split.find("if (a.splits > 1) {"), std::string::npos) << split;
  EXPECT_NE(split.find("atomicAdd(&gbc_counts[o], 1u) == (unsigned)(splits - 1)"), std::string::npos);
  EXPECT_NE(split.find("gbc_counts[o] = 0;"), std::string::npos) << "the counter is left for the next launch";
}

TEST(CudaCodegen, VectorWidthFollowsTheNarrowestContiguousBuffer) {
  EXPECT_EQ(cuda_vector_width(testing::pointwise_mix_kernel()), 8);  // float16 output: 8 x 2 bytes
  EXPECT_EQ(cuda_vector_width(testing::int8_kernel()), 8);           // capped at 8
  kir::Kernel floats = testing::pointwise_mix_kernel();
  floats.buffers[5].dtype = DType::Float32;
  EXPECT_EQ(cuda_vector_width(floats), 4);
  kir::Kernel doubles;
  doubles.name = "doubles";
  doubles.buffers = {testing::buffer("x", DType::Float64, false), testing::buffer("y", DType::Float64, true)};
  doubles.stores = {{1, kir::op("neg", DType::Float64, {kir::load(0, DType::Float64)})}};
  EXPECT_EQ(cuda_vector_width(doubles), 2);
  EXPECT_EQ(cuda_vector_width(testing::softmax_kernel()), 1);
}

TEST(CudaCodegen, ArgumentsCopyBuffersAndScalars) {
  const kir::Kernel k = testing::pointwise_mix_kernel();
  testing::HostArgs host;
  for (const kir::Buffer& b : k.buffers) host.add(b.dtype, 4);
  host.set_affine(1, 2);
  host.set_strided(2, {2, 2}, {1, 2});
  host.scalars = {2.5};
  GbcKernelArgs args = host.args(4, 0, 0);
  GbcCudaKernelArgs cuda = make_cuda_args(k, args);
  EXPECT_EQ(cuda.numel, 4);
  EXPECT_EQ(cuda.buffers[1].s0, 2);
  EXPECT_EQ(cuda.buffers[2].rank, 2);
  EXPECT_EQ(cuda.buffers[2].strides[1], 2);
  EXPECT_EQ(cuda.buffers[5].data, args.buffers[5].data);
  EXPECT_EQ(cuda.scalars[0], 2.5);
  EXPECT_LE(sizeof(GbcCudaKernelArgs), 4096u);
}

TEST(CudaCodegen, KernelsBeyondTheParameterLimitsAreRefused) {
  kir::Kernel wide = testing::half_kernel();
  while (wide.buffers.size() <= GBC_CUDA_MAX_BUFFERS) wide.buffers.push_back(testing::buffer("extra", DType::Float32, false));
  EXPECT_NE(cuda_unsupported_reason(wide).find("at most 16"), std::string::npos) << cuda_unsupported_reason(wide);
  EXPECT_THROW(generate_cuda_kernel(wide), InternalError);
  kir::Kernel scalars = testing::half_kernel();
  scalars.scalar_args.assign(GBC_CUDA_MAX_SCALARS + 1, DType::Float32);
  EXPECT_FALSE(cuda_unsupported_reason(scalars).empty());
  EXPECT_TRUE(cuda_unsupported_reason(testing::layer_norm_kernel(4)).empty());
}

TEST(CudaCodegen, LaunchShapesMeetTheReductionContract) {
  const kir::Kernel softmax = testing::softmax_kernel();
  for (const int64_t inner : {0, 1, 2, 3, 17, 32, 33, 100, 1024, 1025, 4096, 100000, 10000000}) {
    for (const int64_t outer : {1, 7, 1000, 5000000}) {
      GbcCudaKernelArgs args{};
      args.outer = outer;
      args.inner = inner;
      CudaLaunchShape s = cuda_launch_shape(softmax, args, 132);
      const unsigned x = s.block_x, y = s.block_y;
      SCOPED_TRACE("inner " + std::to_string(inner) + " outer " + std::to_string(outer));
      EXPECT_TRUE((x <= 32 && (x & (x - 1)) == 0) || (x % 32 == 0 && x <= 1024 && y == 1)) << x << " x " << y;
      EXPECT_EQ((x * y) % 32, 0u);
      EXPECT_LE(x * y, cuda_max_row_threads(cuda_row_layout(softmax).elements)) << "within the launch bound";
      EXPECT_GE(s.grid, 1u);
      EXPECT_LE(s.grid, 132u * 32);
      if (inner > 32) {
        EXPECT_GE(x, 32u) << "a warp or more per long row";
      }
    }
  }
  // Rows that fit the cached schedule get about 32 elements per thread: small blocks, several rows
  // resident per multiprocessor.
  GbcCudaKernelArgs rows{};
  rows.outer = 8192;
  rows.inner = 8192;
  EXPECT_EQ(cuda_launch_shape(softmax, rows, 132).block_x, 256u);
  rows.inner = 1000;
  EXPECT_EQ(cuda_launch_shape(softmax, rows, 132).block_x, 64u) << "two warps at least";
  rows.inner = 1 << 20;
  EXPECT_EQ(cuda_launch_shape(softmax, rows, 132).block_x, 512u) << "long rows: the launch bound";
  // A sum of a whole tensor (one long row) is split over the device: 4 blocks per multiprocessor.
  const kir::Kernel mean = testing::mean_kernel();
  GbcCudaKernelArgs whole{};
  whole.outer = 1;
  whole.inner = int64_t{1} << 26;
  CudaLaunchShape split = cuda_launch_shape(mean, whole, 132);
  EXPECT_EQ(split.splits, 4 * 132);
  EXPECT_EQ(cuda_launch_shape(mean, whole, 132, 2).splits, 2 * 132) << "one wave of the blocks that fit";
  EXPECT_EQ(cuda_split_threads(mean), 512u);
  EXPECT_EQ(split.grid, 4u * 132);
  EXPECT_EQ(split.block_y, 1u);
  EXPECT_GE(cuda_split_workspace_bytes(1, split.splits), 16u + 8u * 4 * 132);
  // Parts of at least 4096 elements; rows as many as the multiprocessors, or short, are not split.
  whole.inner = 40000;
  EXPECT_EQ(cuda_launch_shape(mean, whole, 132).splits, 9);
  whole.outer = 132;
  EXPECT_EQ(cuda_launch_shape(mean, whole, 132).splits, 1);
  whole.outer = 1;
  whole.inner = 16383;
  EXPECT_EQ(cuda_launch_shape(mean, whole, 132).splits, 1);
  whole.inner = 1 << 20;
  EXPECT_EQ(cuda_launch_shape(softmax, whole, 132).splits, 1) << "two stages: never split";

  GbcCudaKernelArgs args{};
  args.numel = 1 << 20;
  CudaLaunchShape pointwise = cuda_launch_shape(testing::half_kernel(), args, 132);
  EXPECT_EQ(pointwise.block_x, 256u);
  EXPECT_EQ(pointwise.block_y, 1u);
  EXPECT_EQ(pointwise.grid, (1u << 20) / (256 * 8));
}


bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A kernel of one row class holds that schedule only: no choice on the device, no code of the
// others; class All holds all of them, chosen per call.
TEST(CudaRowClasses, EachClassHoldsOnlyItsSchedule) {
  using R = kir::CudaRows;
  const std::string softmax = generate_cuda_kernel(testing::softmax_kernel());
  for (const char* branch : {"if (gbc_cached) {", "} else if (gbc_vec) {", "GbcVec<float, 4> c0[8];", "#pragma unroll 4"})
    EXPECT_TRUE(has(softmax, branch)) << branch << " missing from class All:\n" << softmax;
  const std::string mean = generate_cuda_kernel(testing::mean_kernel());
  EXPECT_TRUE(has(mean, "if (a.splits > 1) {") && has(mean, "if (gbc_vec) {") && has(mean, "if (gbc_cached) {")) << mean;

  for (const kir::Kernel& base : {testing::softmax_kernel(), testing::mean_kernel()}) {
    const bool splittable = cuda_row_layout(base).splittable;
    for (const R rows : {R::Scalar, R::Vector, R::Cached, R::SplitScalar, R::SplitVector}) {
      const bool split = rows == R::SplitScalar || rows == R::SplitVector;
      if (split && !splittable) continue;
      const std::string code = generate_cuda_kernel(testing::of_row_class(base, rows));
      SCOPED_TRACE(base.name + " " + kir::cuda_rows_name(rows) + ":\n" + code);
      EXPECT_FALSE(has(code, "gbc_vec")) << "the class is decided on the host";
      EXPECT_FALSE(has(code, "gbc_cached"));
      EXPECT_FALSE(has(code, "a.splits > 1"));
      EXPECT_EQ(has(code, "gbc_parts"), split) << "the split schedule only in the split classes";
      EXPECT_EQ(has(code, "rows_per_step"), !split) << "the per-row loop only in the others";
      EXPECT_EQ(has(code, "GbcVec<float, 4> c0[8];"), rows == R::Cached) << "registers for the row only when cached";
      EXPECT_EQ(has(code, "#pragma unroll 4"), rows == R::Vector || rows == R::SplitVector);
      EXPECT_EQ(has(code, "GbcVec"), rows != R::Scalar && rows != R::SplitScalar) << "no vector access in scalar rows";
    }
  }
  EXPECT_THROW(generate_cuda_kernel(testing::of_row_class(testing::softmax_kernel(), R::SplitVector)), InternalError)
      << "softmax has two stages: its rows never split";
  kir::Kernel strided = testing::softmax_kernel(kir::IndexKind::Strided);
  strided.buffers[1].index = kir::IndexKind::Strided;
  EXPECT_THROW(generate_cuda_kernel(testing::of_row_class(strided, R::Cached)), InternalError)
      << "rows with no contiguous buffer have no vector schedules";
}

TEST(CudaRowClasses, EveryClassCompilesToPtx) {
  if (!NvrtcCompiler::get().available()) GTEST_SKIP() << "NVRTC not present: " << NvrtcCompiler::get().unavailable_reason();
  using R = kir::CudaRows;
  std::vector<kir::Kernel> kernels;
  for (const R rows : {R::Scalar, R::Vector, R::Cached}) {
    kernels.push_back(testing::of_row_class(testing::softmax_kernel(), rows));
    kernels.push_back(testing::of_row_class(testing::layer_norm_kernel(37), rows));
  }
  for (const R rows : {R::Scalar, R::Vector, R::Cached, R::SplitScalar, R::SplitVector})
    kernels.push_back(testing::of_row_class(testing::mean_kernel(), rows));
  CudaPtx ptx = compile_cuda_ptx(generate_cuda_source(kernels, "row_classes"), 90, /*use_cache=*/false);
  ASSERT_TRUE(ptx.build.ok) << ptx.build.log;
  EXPECT_EQ(ptx.build.log.find("warning"), std::string::npos) << ptx.build.log;
  for (const kir::Kernel& k : kernels) {
    const std::string body = entry(ptx.build.binary, k.name);
    EXPECT_FALSE(body.empty()) << k.name;
    const bool vector = k.cuda_rows != R::Scalar && k.cuda_rows != R::SplitScalar;
    EXPECT_EQ(std::regex_search(body, std::regex(R"(ld\.global(\.nc)?\.v4\.f32)")), vector) << k.name;
  }
}

// The class a call takes is what the All kernel picks on the device under cuda_launch_shape's
// launch: split exactly when the launch splits, cached exactly when the row fits its block.
TEST(CudaRowClasses, TheClassAgreesWithTheLaunchShape) {
  using R = kir::CudaRows;
  for (const kir::Kernel& k : {testing::softmax_kernel(), testing::mean_kernel(), testing::softmax_kernel(kir::IndexKind::Strided)}) {
    const CudaRowLayout layout = cuda_row_layout(k);
    for (const int sms : {1, 4, 132}) {
      for (const int64_t outer : {1, 3, 131, 132, 5000}) {
        for (const int64_t inner : {1, 5, 32, 33, 64, 512, 513, 1000, 1001, 4096, 8192, 16383, 16384, 16388, 32768, 40000, 1 << 20}) {
          for (const bool aligned : {true, false}) {
            SCOPED_TRACE(k.name + " sms " + std::to_string(sms) + " outer " + std::to_string(outer) + " inner " +
                         std::to_string(inner) + (aligned ? "" : " misaligned"));
            GbcCudaKernelArgs args{};
            args.outer = outer;
            args.inner = inner;
            const CudaLaunchShape shape = cuda_launch_shape(k, args, sms);
            const R rows = cuda_row_class(k, outer, inner, aligned, sms);
            EXPECT_EQ(rows == R::SplitScalar || rows == R::SplitVector, shape.splits > 1);
            const bool vec = layout.width > 1 && inner % layout.width == 0 && aligned;
            if (shape.splits > 1) {
              EXPECT_EQ(rows, vec ? R::SplitVector : R::SplitScalar);
            } else if (!vec) {
              EXPECT_EQ(rows, R::Scalar);
            } else {
              EXPECT_EQ(rows, inner <= int64_t{layout.elements} * shape.block_x ? R::Cached : R::Vector);
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cuda_row_class(testing::half_kernel(), 1, 1 << 20, true, 132), R::All) << "pointwise kernels have no classes";
  // The pointers decide alignment: 16 bytes for float32 vectors of 4.
  const kir::Kernel softmax = testing::softmax_kernel();
  const CudaRowLayout layout = cuda_row_layout(softmax);
  alignas(16) float storage[8] = {};
  const void* aligned[2] = {storage, storage + 4};
  const void* output_off[2] = {storage, storage + 1};
  EXPECT_TRUE(cuda_vector_aligned(softmax, layout, aligned));
  EXPECT_FALSE(cuda_vector_aligned(softmax, layout, output_off)) << "stored outputs count too";
}

}  // namespace
}  // namespace gbc::codegen
