// Kernel regions with a refine_variant hook (kernel_region.h), the way CUDA regions key reduction
// variants by row class: a call whose class changes (other sizes of the same layout, or a view
// whose pointer sits otherwise on a 16-byte boundary) compiles a new variant, one of a class seen
// before reuses its variant, and an unchanged call compiles nothing. The hook here is a fake (no
// GPU or NVRTC needed): cuda_corpus_test.cpp runs the real one on every corpus model.
#include <ATen/ops/allclose.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/softmax.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/kernel/interpreter.h"
#include "compiler/runtime/graph_runtime.h"
#include "compiler/runtime/kernel_region.h"
#include "harness/model/model_loader.h"
#include "tests/support/cuda_plan_on_cpu.h"

namespace gbc {
namespace {

// What the fake compiler saw.
struct Compiled {
  int modules = 0;
  std::vector<kir::CudaRows> classes;  // of every compiled reduction variant, in order
  std::vector<int64_t> refined_inner;  // inner of every refine_variant call
};

// Rows of up to 64 elements are "cached", longer ones "vector", and any misaligned buffer "scalar".
void fake_refine(kir::Kernel& kernel, int64_t outer, int64_t inner, const std::vector<void*>* data, Compiled& seen) {
  seen.refined_inner.push_back(inner);
  bool aligned = true;
  if (data)
    for (void* p : *data) aligned = aligned && reinterpret_cast<uintptr_t>(p) % 16 == 0;
  kernel.cuda_rows = !aligned ? kir::CudaRows::Scalar : inner <= 64 ? kir::CudaRows::Cached : kir::CudaRows::Vector;
}

// gbc's CUDA plan with the fake hook, on CPU tensors; kernels are interpreted.
std::unique_ptr<RegionCompiler> refined_regions(Compiled& seen) {
  return std::make_unique<testing::CudaPlanOnCpu>([&seen](const CompileContext&) {
    KernelRegionOptions o;
    o.native = [&seen](const std::vector<kir::Kernel>& kernels, const std::string&) {
      ++seen.modules;
      NativeModule m;
      m.ok = true;
      for (const kir::Kernel& k : kernels) {
        if (k.kind == kir::KernelKind::Reduction) seen.classes.push_back(k.cuda_rows);
        m.functions.push_back([k](const GbcKernelArgs* args) { interpret_kernel(k, *args); });
      }
      return m;
    };
    o.refine_variant = [&seen](kir::Kernel& k, int64_t outer, int64_t inner, const std::vector<void*>* data) {
      fake_refine(k, outer, inner, data, seen);
    };
    return o;
  });
}

const char* kSoftmax = R"(format: gbcheck/v1
name: softmax_rows
dims: {N: [1, 8], C: [1, 4096]}
inputs:
  x: {shape: [N, C], dtype: float32}
graph:
  - {id: y, op: softmax, args: [x], dim: -1}
outputs: [y]
)";

TEST(KernelRegion, ARowClassChangeCompilesANewVariantAndAnUnchangedCallNone) {
  Model model = load_model_text(kSoftmax, "softmax_rows.yaml");
  Compiled seen;
  GraphRuntime runtime("gbc-refined", refined_regions(seen));
  BackendOptions options;
  options.dynamic = "true";  // one region for every size: its variants are what this test counts
  runtime.prepare(model.graph, options);
  auto run = [&](const at::Tensor& x) {
    std::vector<at::Tensor> out = runtime.run({x});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(at::allclose(out[0], at::softmax(x, -1), 1e-5, 1e-6));
  };

  run(at::randn({4, 16}));
  ASSERT_EQ(seen.modules, 1);
  ASSERT_EQ(seen.classes, std::vector<kir::CudaRows>{kir::CudaRows::Cached});
  EXPECT_EQ(seen.refined_inner.front(), 16) << "inner is the reduced dim's size";
  const size_t refined = seen.refined_inner.size();
  run(at::randn({4, 16}));
  EXPECT_EQ(seen.modules, 1) << "the same layout, sizes and alignment: nothing compiles";
  EXPECT_EQ(seen.refined_inner.size(), refined) << "nor is the variant looked up again";

  run(at::randn({4, 1000}));  // the same layout key, another class
  EXPECT_EQ(seen.modules, 2);
  EXPECT_EQ(seen.classes.back(), kir::CudaRows::Vector);

  // A view one element into its storage: the same sizes and strides, a misaligned pointer.
  at::Tensor storage = at::randn({4 * 1000 + 1});
  run(storage.narrow(0, 1, 4 * 1000).view({4, 1000}));
  EXPECT_EQ(seen.modules, 3);
  EXPECT_EQ(seen.classes.back(), kir::CudaRows::Scalar);

  run(at::randn({4, 20}));  // cached again: its variant is reused
  run(at::randn({4, 1000}));
  EXPECT_EQ(seen.modules, 3) << "classes seen before reuse their variants";
  EXPECT_EQ(seen.classes.size(), 3u);
}

// The first call's variants compile before it runs, from the region's inputs' pointers: a
// misaligned input gets its class there, with no wasted variant.
TEST(KernelRegion, TheFirstCallsClassesFollowItsInputsPointers) {
  Model model = load_model_text(kSoftmax, "softmax_rows.yaml");
  Compiled seen;
  GraphRuntime runtime("gbc-refined", refined_regions(seen));
  runtime.prepare(model.graph, BackendOptions{});
  at::Tensor storage = at::randn({4 * 1000 + 1});
  at::Tensor x = storage.narrow(0, 1, 4 * 1000).view({4, 1000});
  std::vector<at::Tensor> out = runtime.run({x});
  EXPECT_TRUE(at::allclose(out.at(0), at::softmax(x, -1), 1e-5, 1e-6));
  EXPECT_EQ(seen.modules, 1);
  EXPECT_EQ(seen.classes, std::vector<kir::CudaRows>{kir::CudaRows::Scalar});
}

}  // namespace
}  // namespace gbc
