// Tests of the fuzzer's kernel prefetch (harness/fuzz/campaign/kernel_prefetch.h): after the
// prefetch of a batch of generated graphs, their checks, as the fuzzer's child runs them, build no
// module (every kernel they run was built by the prefetch), and pass; a second prefetch of the
// same graphs builds nothing; and the prefetch stays out of runs it cannot help.
#include "harness/fuzz/campaign/kernel_prefetch.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/codegen/cpu_compiler.h"
#include "compiler/support/file_tree.h"
#include "harness/fuzz/fuzz_config.h"
#include "harness/fuzz/graph_generator.h"
#include "harness/runner/check_runner.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

struct PrefetchFixture {
  fs::path cache = fs::temp_directory_path() / ("gbc_prefetch_test_" + std::to_string(::getpid()));
  GraphCheckOptions options;
  std::vector<Model> models;

  PrefetchFixture() {
    clear();
    options.backends = {"gbc"};
    options.backend_options.cache_dir = cache.string();
    GeneratorConfig config = default_generator_config();
    config.min_nodes = 6;
    config.max_nodes = 10;
    config.cases = 2;
    config.backends = options.backends;
    for (uint64_t seed : {8100001, 8100002, 8100003}) models.push_back(generate_model(seed, config));
  }
  ~PrefetchFixture() { clear(); }
  void clear() const {
    std::error_code ignored;
    remove_tree(cache.string(), ignored);
  }
};

TEST(KernelPrefetch, TheChecksAfterItBuildNoModule) {
  PrefetchFixture f;
  ASSERT_TRUE(kernel_prefetch_applies(f.options, f.models.front()));
  const KernelPrefetch p = prefetch_kernels(f.models, f.options);
  EXPECT_EQ(p.error, "");
  EXPECT_EQ(p.graphs, 3);
  ASSERT_GT(p.kernels, 0);
  EXPECT_EQ(p.kernels_built, p.kernels);
  EXPECT_EQ(p.kernels_cached, 0);
  for (const Model& m : f.models) {
    const int64_t before = codegen::cpu_compiler_invocations();
    const CheckReport report = run_check(m, graph_check_run_options(m, f.options));
    EXPECT_EQ(codegen::cpu_compiler_invocations(), before) << m.name << ": a module was built after the prefetch";
    ASSERT_EQ(report.backends.size(), 1u);
    EXPECT_TRUE(report.backends[0].failures.empty()) << m.name;
  }
  // The same graphs again: every kernel is in the cache, nothing is built.
  const KernelPrefetch again = prefetch_kernels(f.models, f.options);
  EXPECT_EQ(again.kernels, p.kernels);
  EXPECT_EQ(again.kernels_cached, p.kernels);
  EXPECT_EQ(again.kernels_built, 0);
}

TEST(KernelPrefetch, AppliesOnlyToGbcOnTheCpuWithTheKernelCache) {
  PrefetchFixture f;
  GraphCheckOptions interp = f.options;
  interp.backends = {"gbc-interp", "nnc"};
  EXPECT_FALSE(kernel_prefetch_applies(interp, f.models.front()));
  GraphCheckOptions uncached = f.options;
  uncached.backend_options.use_cache = false;
  EXPECT_FALSE(kernel_prefetch_applies(uncached, f.models.front()));
  Model on_cuda = f.models.front();
  on_cuda.check.device = "cuda";
  EXPECT_FALSE(kernel_prefetch_applies(f.options, on_cuda));
  EXPECT_EQ(prefetch_kernels({}, f.options).graphs, 0);
}

}  // namespace
}  // namespace gbc
