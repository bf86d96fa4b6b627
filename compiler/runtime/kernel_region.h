// A region run as fused kernels (kernel_plan.h): what gbc-interp and gbc compile a region to.
// A call walks the plan's steps: a kernel step allocates its outputs with ATen on the call's
// device, takes each buffer's strides as the kernel iterates it (broadcast, permuted and sliced
// inputs need no copies), specializes the buffers' index kinds (specialize.h), fills GbcKernelArgs
// and runs the kernel; extern and library steps run on ATen in the plan's order (so dropout draws
// the same random numbers as eager). Kernels run in the interpreter, or, given a native compiler,
// as native code: the first call with a new layout runs in the interpreter and records the layouts,
// then one module with every kernel variant the call needed is compiled. A module that fails to
// compile is a fallback (FB001, with the compiler's first error line): its kernels' nodes run on
// ATen from then on. Tests: tests/runtime/backends_test.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/kernel/kernel_abi.h"
#include "compiler/kernel/kernel_ir.h"
#include "compiler/runtime/region_executable.h"

namespace gbc {

/// Native code for kernels, or why there is none.
struct NativeModule {
  bool ok = false;
  std::vector<GbcKernelFn> functions;  // per kernel, in the order given
  std::string error;                   // the compiler's first error line
  double compile_ms = 0.0;
};

/// Compiles kernels (specialized to their layouts, uniquely named) into one module.
using NativeCompiler = std::function<NativeModule(const std::vector<kir::Kernel>& kernels, const std::string& module)>;

struct KernelRegionOptions {
  std::string label;        // "graph0": profile rows and module names start with it
  NativeCompiler native;    // empty: every kernel runs in the interpreter (gbc-interp)
  int num_threads = 1;      // the budget passed to native kernels
};

std::unique_ptr<RegionExecutable> make_kernel_region(const Graph& region, CompileContext& ctx,
                                                     const KernelRegionOptions& options);

}  // namespace gbc
