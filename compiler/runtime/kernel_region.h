// A region run as fused kernels (kernel_plan.h): what gbc-interp and gbc compile a region to.
// A call walks the plan's steps: a kernel step is a KernelCall (kernel_call.h), which allocates the
// kernel's outputs with ATen on the call's device, takes each buffer's strides as the kernel
// iterates it (broadcast, permuted and sliced inputs need no copies), specializes the buffers'
// index kinds and runs the kernel; extern and library steps run on ATen in the plan's order (so
// dropout draws the same random numbers as eager). Kernels run in the interpreter (gbc-interp), or,
// given a native compiler (gbc: the host C++ compiler, or NVRTC for CUDA), as native code from the
// first call on: before a call's first step, the variants it will need are predicted from its
// inputs' layouts (predicted_layouts.h) and compiled in one module; a variant the prediction missed
// (a kernel reading what a random op made, a new layout on a later call, or on CUDA a reduction
// call of another row class: refine_variant) is compiled alone before its launch. A module that
// fails to compile is a fallback (FB001, with the compiler's first error line): its kernels' nodes
// run on ATen from then on. Native from the first call, because a
// first call in the interpreter could differ from later ones in the last bit (0 vs -0), which the
// determinism oracle rightly calls a bug. With an observer, every kernel runs in the interpreter
// and the observer sees each member node's values (`gbcheck bisect`).
// Tests: tests/runtime/backends_test.cpp, tests/runtime/predicted_layouts_test.cpp,
// tests/codegen/cuda_corpus_test.cpp, tests/bisect/bisect_test.cpp (observed).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/kernel/kernel_ir.h"
#include "compiler/runtime/kernel_call.h"
#include "compiler/runtime/region_executable.h"

namespace gbc {

/// Native code for kernels, or why there is none.
struct NativeModule {
  bool ok = false;
  std::vector<KernelFn> functions;     // per kernel, in the order given
  std::string error;                   // the compiler's first error line
  double compile_ms = 0.0;
};

/// Sets what a kernel variant holds beyond its layouts, for a call of `outer` rows of `inner`
/// elements (reductions only) whose buffers start at (*data)[b]. Before the call (the first call's
/// variants, compiled ahead) a pointer not known yet (a buffer the call allocates) is nullptr:
/// aligned, as ATen allocates them; data itself nullptr: none known.
using RefineVariant =
    std::function<void(kir::Kernel& specialized, int64_t outer, int64_t inner, const std::vector<void*>* data)>;

/// Compiles kernels (specialized to their layouts, uniquely named) into one module.
using NativeCompiler = std::function<NativeModule(const std::vector<kir::Kernel>& kernels, const std::string& module)>;

struct KernelRegionOptions {
  std::string label;        // "graph0": profile rows and module names start with it
  NativeCompiler native;    // empty: every kernel runs in the interpreter (gbc-interp)
  int num_threads = 1;      // the budget passed to native kernels
  // Called with every tensor a compiled kernel reads or writes, just before it runs (a CUDA graph
  // capture keeps them alive); empty: not called.
  std::function<void(const at::Tensor&)> on_buffer;
  // The FB001 hint: where the compiler's full output is and what configures the compiler.
  std::string compile_hint = "see the compiler's full output with --log kernels; GBCHECK_CXX names the C++ compiler";
  // CUDA: sets a reduction variant's row class (kir::Kernel::cuda_rows), which then joins its key
  // (layouts "|" class): calls of another class, from other sizes or from pointers aligned
  // otherwise (a view's offset, with the same layout), take another variant. Checked every call
  // (the pointers' offsets from 16-byte boundaries against the last call's), looked up only when
  // something changed. Empty: one variant per layout.
  RefineVariant refine_variant;
  // Watches every kernel, which then runs in the interpreter (`native` must be empty). Once it is
  // done, a call runs no further step and returns no outputs. nullptr: not watched.
  KernelObserver* observer = nullptr;
};

std::unique_ptr<RegionExecutable> make_kernel_region(const Graph& region, CompileContext& ctx,
                                                     const KernelRegionOptions& options);

}  // namespace gbc
