// A region run as fused kernels (kernel_plan.h): what gbc-interp and gbc compile a region to.
// A call walks the plan's steps: a kernel step allocates its outputs with ATen on the call's
// device, takes each buffer's strides as the kernel iterates it (broadcast, permuted and sliced
// inputs need no copies), specializes the buffers' index kinds (specialize.h), fills GbcKernelArgs
// and runs the kernel; extern and library steps run on ATen in the plan's order (so dropout draws
// the same random numbers as eager). Kernels run in the interpreter, or, given a native compiler,
// as native code: the first call with a new layout runs in the interpreter and records the layouts,
// then one module with every kernel variant the call needed is compiled. A module that fails to
// compile is a fallback (FB001, with the compiler's first error line): its kernels stay in the
// interpreter from then on, so a repeated call gives the first call's bits (with
// compile_before_launch, their nodes run on ATen instead). On a device the interpreter cannot read
// (CUDA, cuda_kernel_runner.h), the options say compile_before_launch: the variants a call will need are predicted from its inputs'
// layouts and compiled in one module before its first step, and a variant the prediction missed
// (a kernel reading what an ATen step made) is compiled alone before its launch.
// Tests: tests/runtime/backends_test.cpp, tests/codegen/cuda_corpus_test.cpp (compile_before_launch).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/kernel/kernel_abi.h"
#include "compiler/kernel/kernel_ir.h"
#include "compiler/runtime/region_executable.h"

namespace gbc {

/// Runs one compiled kernel: a native CPU function, or a launch on a device.
using KernelFn = std::function<void(const GbcKernelArgs* args)>;

/// Native code for kernels, or why there is none.
struct NativeModule {
  bool ok = false;
  std::vector<KernelFn> functions;     // per kernel, in the order given
  std::string error;                   // the compiler's first error line
  double compile_ms = 0.0;
};

/// Compiles kernels (specialized to their layouts, uniquely named) into one module.
using NativeCompiler = std::function<NativeModule(const std::vector<kir::Kernel>& kernels, const std::string& module)>;

struct KernelRegionOptions {
  std::string label;        // "graph0": profile rows and module names start with it
  NativeCompiler native;    // empty: every kernel runs in the interpreter (gbc-interp)
  int num_threads = 1;      // the budget passed to native kernels
  // The kernels' data is where the interpreter cannot read it: variants are compiled before their
  // first launch, never interpreted.
  bool compile_before_launch = false;
  // Called with every tensor a compiled kernel reads or writes, just before it runs (a CUDA graph
  // capture keeps them alive); empty: not called.
  std::function<void(const at::Tensor&)> on_buffer;
  // The FB001 hint: where the compiler's full output is and what configures the compiler.
  std::string compile_hint = "see the compiler's full output with --log kernels; GBCHECK_CXX names the C++ compiler";
};

std::unique_ptr<RegionExecutable> make_kernel_region(const Graph& region, CompileContext& ctx,
                                                     const KernelRegionOptions& options);

}  // namespace gbc
