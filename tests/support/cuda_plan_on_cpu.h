// gbc's region compiler for device cuda, on CPU tensors: the CUDA plan (LowerOptions::Target::Cuda:
// row kernels, no CPU column schedule) with kernel region options the test gives, whose native
// compiler must run the kernels on the CPU (or fail). Used by tests/codegen/cuda_corpus_test.cpp
// and tests/runtime/kernel_region_test.cpp.
#pragma once

#include <functional>
#include <memory>
#include <utility>

#include "compiler/runtime/graph_runtime.h"
#include "compiler/runtime/kernel_region.h"

namespace gbc::testing {

class CudaPlanOnCpu : public RegionCompiler {
 public:
  /// The region options for a compile (label set from ctx afterwards).
  using MakeOptions = std::function<KernelRegionOptions(const CompileContext& cuda_ctx)>;
  explicit CudaPlanOnCpu(MakeOptions options) : options_(std::move(options)) {}

  std::unique_ptr<RegionExecutable> compile(const Graph& region, CompileContext& ctx) override {
    BackendOptions cuda = ctx.options;
    cuda.device = "cuda";
    CompileContext cuda_ctx{cuda, ctx.stats, ctx.label};
    KernelRegionOptions o = options_(cuda_ctx);
    o.label = ctx.label;
    std::unique_ptr<RegionExecutable> exe = make_kernel_region(region, cuda_ctx, o);
    ctx.fusion_groups += cuda_ctx.fusion_groups;
    ctx.extern_calls += cuda_ctx.extern_calls;
    return exe;
  }

 private:
  MakeOptions options_;
};

}  // namespace gbc::testing
