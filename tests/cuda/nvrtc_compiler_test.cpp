#include "compiler/cuda/nvrtc_compiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "tests/cuda/kernels.h"

namespace gbc {
namespace {

#define SKIP_WITHOUT_NVRTC()                                                               \
  if (!NvrtcCompiler::get().available()) {                                                \
    GTEST_SKIP() << "NVRTC not present: " << NvrtcCompiler::get().unavailable_reason();   \
  }

TEST(NvrtcCompilerTest, ReportsVersionOrReason) {
  const NvrtcCompiler& nvrtc = NvrtcCompiler::get();
  if (nvrtc.available()) {
    EXPECT_TRUE(std::regex_match(nvrtc.version(), std::regex(R"(\d+\.\d+)"))) << nvrtc.version();
    EXPECT_FALSE(nvrtc.library_path().empty());
    EXPECT_TRUE(nvrtc.unavailable_reason().empty());
  } else {
    EXPECT_NE(nvrtc.unavailable_reason().find("libnvrtc"), std::string::npos) << nvrtc.unavailable_reason();
  }
}

TEST(NvrtcCompilerTest, FlagsPickTargetAndKeepFastMathOff) {
  CompileOptions options;
  options.arch = 90;
  std::vector<std::string> flags = NvrtcCompiler::flags(options);
  ASSERT_FALSE(flags.empty());
  EXPECT_EQ(flags.front(), "--gpu-architecture=compute_90");
  EXPECT_EQ(std::count(flags.begin(), flags.end(), "--use_fast_math"), 0);
  EXPECT_EQ(std::count(flags.begin(), flags.end(), "-std=c++17"), 1);
  EXPECT_EQ(std::count(flags.begin(), flags.end(), "-default-device"), 1);

  options.cubin = true;
  options.fast_math = true;
  flags = NvrtcCompiler::flags(options);
  EXPECT_EQ(flags.front(), "--gpu-architecture=sm_90");
  EXPECT_EQ(std::count(flags.begin(), flags.end(), "--use_fast_math"), 1);
}

class NvrtcArchTest : public ::testing::TestWithParam<int> {};

TEST_P(NvrtcArchTest, CompilesElementwiseKernelsToPtx) {
  SKIP_WITHOUT_NVRTC();
  CompileOptions options;
  options.arch = GetParam();
  CompileResult result = NvrtcCompiler::get().compile(test::kAxpySource, "axpy.cu", options);
  ASSERT_TRUE(result.ok) << result.log;
  const std::string& ptx = result.binary;
  EXPECT_NE(ptx.find(".target sm_" + std::to_string(GetParam())), std::string::npos) << ptx.substr(0, 400);
  EXPECT_NE(ptx.find(".entry axpy_f32"), std::string::npos);
  EXPECT_NE(ptx.find(".entry axpy_f64"), std::string::npos);
  EXPECT_EQ(ptx.find('\0'), std::string::npos) << "PTX text must not carry NVRTC's terminator";
  EXPECT_GT(result.compile_ms, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Archs, NvrtcArchTest, ::testing::Values(80, 90),
                         [](const auto& info) { return "sm_" + std::to_string(info.param); });

TEST(NvrtcCompilerTest, CompilesCubin) {
  SKIP_WITHOUT_NVRTC();
  CompileOptions options;
  options.arch = 90;
  options.cubin = true;
  CompileResult result = NvrtcCompiler::get().compile(test::kAxpySource, "axpy.cu", options);
  ASSERT_TRUE(result.ok) << result.log;
  EXPECT_EQ(result.binary.substr(0, 4), "\x7f" "ELF");
  EXPECT_NE(result.binary.find("axpy_f32"), std::string::npos);
}

TEST(NvrtcCompilerTest, SyntaxErrorNamesTheLine) {
  SKIP_WITHOUT_NVRTC();
  const char* source =
      "extern \"C\" __global__ void broken(float* y) {\n"
      "  int i = threadIdx.x;\n"
      "  y[i] = 1.0f +;\n"
      "}\n";
  CompileResult result = NvrtcCompiler::get().compile(source, "broken.cu", CompileOptions{});
  EXPECT_FALSE(result.ok);
  EXPECT_TRUE(result.binary.empty());
  EXPECT_NE(result.log.find("broken.cu(3)"), std::string::npos) << result.log;
  EXPECT_NE(result.log.find("error"), std::string::npos) << result.log;
}

TEST(NvrtcCompilerTest, BadOptionIsReportedNotThrown) {
  SKIP_WITHOUT_NVRTC();
  CompileOptions options;
  options.extra.push_back("--no-such-option");
  CompileResult result = NvrtcCompiler::get().compile(test::kAxpySource, "axpy.cu", options);
  EXPECT_FALSE(result.ok);
  EXPECT_NE(result.log.find("nvrtcCompileProgram"), std::string::npos) << result.log;
}

// Numerics: without fast math, float division is IEEE round-to-nearest and denormals survive.
TEST(NvrtcCompilerTest, DefaultOptionsKeepIeeeDivision) {
  SKIP_WITHOUT_NVRTC();
  const char* source = "extern \"C\" __global__ void quotient(float* y, const float* a, const float* b) {\n"
                       "  y[threadIdx.x] = a[threadIdx.x] / b[threadIdx.x];\n"
                       "}\n";
  CompileResult precise = NvrtcCompiler::get().compile(source, "div.cu", CompileOptions{});
  ASSERT_TRUE(precise.ok) << precise.log;
  EXPECT_NE(precise.binary.find("div.rn.f32"), std::string::npos);
  EXPECT_EQ(precise.binary.find(".ftz"), std::string::npos);

  CompileOptions fast;
  fast.fast_math = true;
  CompileResult approximate = NvrtcCompiler::get().compile(source, "div.cu", fast);
  ASSERT_TRUE(approximate.ok) << approximate.log;
  EXPECT_EQ(approximate.binary.find("div.rn.f32"), std::string::npos);
}

}  // namespace
}  // namespace gbc
