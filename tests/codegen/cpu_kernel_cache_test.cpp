// The per-kernel cache of CPU kernels (compiler/codegen/cpu_kernel_cache.h): a kernel compiled in
// one module is taken from that module's library by a later module whose kernel computes the
// same under other names, only the kernels not cached are compiled, a kernel twice in one module
// compiles once, a record whose library is gone is a miss, and without the cache nothing is
// recorded. The kernels resolved this way compute what the interpreter computes.
#include "compiler/codegen/cpu_kernel_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "compiler/codegen/cpu_codegen.h"
#include "compiler/kernel/interpreter.h"
#include "tests/codegen/codegen_test_util.h"
#include "tests/support/temp_dir.h"

namespace gbc::codegen {
namespace {

namespace fs = std::filesystem;

// A fresh cache folder (support/temp_dir.h), with the options gbc's CPU backend passes.
class CacheDir {
 public:
  CacheDir() : dir_("kernel-cache-test") {}
  CpuCompileOptions options() const {
    CpuCompileOptions o;
    o.cache_dir = path();
    o.shared_header = cpu_kernel_header();
    return o;
  }
  int records() const {
    int n = 0;
    for (const auto& e : fs::directory_iterator(path())) n += e.path().extension() == ".kernel";
    return n;
  }
  std::string path() const { return dir_.root().string(); }

 private:
  gbc::testing::TempDir dir_;
};

// The softmax test kernel under other kernel and buffer names.
kir::Kernel renamed_softmax(const std::string& name) {
  kir::Kernel k = gbc::testing::softmax_kernel();
  k.name = name;
  k.buffers[0].name = name + "_in";
  k.buffers[1].name = name + "_out";
  return k;
}

// Runs a compiled softmax and the interpreter on the same rows: equal to rounding (the compiled
// rows fold in lanes, the interpreter in order).
void expect_softmax_runs(GbcKernelFn fn, const kir::Kernel& kernel) {
  const int64_t outer = 3, inner = 50;
  gbc::testing::HostArgs h;
  h.add(DType::Float32, static_cast<size_t>(outer * inner));
  h.add(DType::Float32, static_cast<size_t>(outer * inner));
  gbc::testing::fill_random(h.data<float>(0), static_cast<size_t>(outer * inner), 5);
  GbcKernelArgs args = h.args(0, outer, inner);
  fn(&args);
  const std::vector<unsigned char> compiled = h.bytes(1);
  interpret_kernel(kernel, args);
  EXPECT_TRUE(gbc::testing::floats_close(compiled, h.bytes(1), 1e-6, 1e-9));
}

TEST(CpuKernelCache, AKernelCompiledOnceServesLaterModulesUnderOtherNames) {
  CacheDir dir;
  const int64_t before = cpu_compiler_invocations();
  CpuKernelsBuild first = compile_cpu_kernels({renamed_softmax("fused_0"), gbc::testing::layer_norm_kernel(37)}, "g0_m0", dir.options());
  ASSERT_TRUE(first.result.ok) << first.result.log;
  EXPECT_EQ(first.kernels_from_cache, 0);
  EXPECT_FALSE(first.result.cache_hit);
  EXPECT_EQ(cpu_compiler_invocations(), before + 1);
  EXPECT_EQ(dir.records(), 2);

  // The same softmax under other names, beside a kernel never compiled: only that one compiles.
  CpuKernelsBuild second = compile_cpu_kernels({gbc::testing::argmax_kernel(DType::Float32), renamed_softmax("fused_7")}, "g1_m0", dir.options());
  ASSERT_TRUE(second.result.ok) << second.result.log;
  EXPECT_EQ(second.kernels_from_cache, 1);
  EXPECT_EQ(cpu_compiler_invocations(), before + 2);
  EXPECT_EQ(second.result.kernels.at(1), first.result.kernels.at(0)) << "the first module's entry point";
  EXPECT_NE(second.compiled_source.find("argmax_float32"), std::string::npos);
  EXPECT_EQ(second.compiled_source.find("fused_7"), std::string::npos) << "the cached kernel is not compiled again";
  expect_softmax_runs(second.result.kernels.at(1), renamed_softmax("fused_7"));

  // Every kernel cached: no compiler run at all.
  CpuKernelsBuild third = compile_cpu_kernels({renamed_softmax("k"), gbc::testing::argmax_kernel(DType::Float32)}, "g2_m0", dir.options());
  ASSERT_TRUE(third.result.ok) << third.result.log;
  EXPECT_TRUE(third.result.cache_hit);
  EXPECT_EQ(third.kernels_from_cache, 2);
  EXPECT_TRUE(third.compiled_source.empty());
  EXPECT_EQ(cpu_compiler_invocations(), before + 2);
}

TEST(CpuKernelCache, KeysFollowTheCodeNotTheNames) {
  const CpuCompileOptions options;
  EXPECT_EQ(cpu_kernel_key(renamed_softmax("a"), options), cpu_kernel_key(renamed_softmax("b"), options));
  EXPECT_NE(cpu_kernel_key(gbc::testing::softmax_kernel(), options), cpu_kernel_key(gbc::testing::softmax_kernel(kir::IndexKind::Strided), options));
  kir::Kernel faulty = gbc::testing::softmax_kernel();
  faulty.fault = InjectedFault::ReduceBound;
  EXPECT_NE(cpu_kernel_key(gbc::testing::softmax_kernel(), options), cpu_kernel_key(faulty, options)) << "an injected fault is other code";
  CpuCompileOptions flagged;
  flagged.extra_flags = {"-fno-unroll-loops"};
  EXPECT_NE(cpu_kernel_key(gbc::testing::softmax_kernel(), options), cpu_kernel_key(gbc::testing::softmax_kernel(), flagged));
}

TEST(CpuKernelCache, TwiceInOneModuleCompilesOnceAndAMissingLibraryIsAMiss) {
  CacheDir dir;
  const int64_t before = cpu_compiler_invocations();
  CpuKernelsBuild build = compile_cpu_kernels({renamed_softmax("a"), renamed_softmax("b")}, "g_m0", dir.options());
  ASSERT_TRUE(build.result.ok) << build.result.log;
  EXPECT_EQ(build.result.kernels.at(0), build.result.kernels.at(1));
  EXPECT_EQ(build.compiled_source.find("void b("), std::string::npos) << "b is a's code";
  EXPECT_EQ(dir.records(), 1);
  expect_softmax_runs(build.result.kernels.at(1), renamed_softmax("b"));

  // The library behind the record is gone (the cache cleared by another process; this one never
  // loaded it): compiled again, not an error.
  for (const auto& e : fs::directory_iterator(dir.path()))
    if (e.path().extension() == ".kernel") std::ofstream(e.path()) << "0123456789abcdef0123456789abcdef.so\nfused_0\n";
  CpuKernelsBuild again = compile_cpu_kernels({renamed_softmax("c")}, "g2_m0", dir.options());
  ASSERT_TRUE(again.result.ok) << again.result.log;
  EXPECT_EQ(again.kernels_from_cache, 0);
  EXPECT_EQ(cpu_compiler_invocations(), before + 2);
  expect_softmax_runs(again.result.kernels.at(0), renamed_softmax("c"));
}

TEST(CpuKernelCache, WithoutTheCacheNothingIsRecorded) {
  CacheDir dir;
  CpuCompileOptions options = dir.options();
  options.use_cache = false;
  CpuKernelsBuild build = compile_cpu_kernels({renamed_softmax("a")}, "g_m0", options);
  ASSERT_TRUE(build.result.ok) << build.result.log;
  EXPECT_EQ(dir.records(), 0);
  EXPECT_TRUE(fs::is_empty(dir.path()));
}

}  // namespace
}  // namespace gbc::codegen
