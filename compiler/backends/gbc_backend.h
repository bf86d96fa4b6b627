// The `gbc` backend, the top of gbc's ladder and check.backends' default: gbc-interp's fused
// kernels compiled to native code. Each region specialization's kernels go into one C++
// translation unit (compiler/codegen/cpu_codegen.h), built by the host compiler, cached on disk by
// content and loaded with dlopen (cpu_compiler.h). The first call of a specialization runs its
// kernels in the interpreter while their layouts are recorded; the module is built right after,
// and later calls run native code on up to $GBCHECK_THREADS threads (default: every core). A
// module that does not compile is a fallback (FB001, with the compiler's first error line; the full
// output on --log kernels) and its kernels stay in the interpreter. Reports what gbc-interp reports;
// compile_ms includes the C++ compiler. With device cuda the kernels are CUDA C++ compiled by NVRTC
// before their first launch instead (compiler/runtime/cuda_kernel_runner.h).
// Tests: tests/runtime/backends_test.cpp (FB001 included), tests/backends/gbc_cuda_test.cpp (GPU).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/backends/backend.h"
#include "compiler/codegen/cpu_compiler.h"
#include "compiler/kernel/kernel_ir.h"

namespace gbc {

std::unique_ptr<Backend> make_gbc_backend();

/// gbc with flags appended to the host compiler's (cpu_compile_flags; part of the cache key). The
/// seam tests use to make every module fail to compile with a flag the compiler rejects (FB001).
std::unique_ptr<Backend> make_gbc_backend_with_cxx_flags(std::vector<std::string> extra_cxx_flags);

/// Receives a CPU module's kernels and the options they would be built with.
using CpuKernelCollector = std::function<void(const std::vector<kir::Kernel>&, const codegen::CpuCompileOptions&)>;
/// While set, gbc builds no CPU module: it hands the module's kernels to `collector` and runs them
/// in its kernel interpreter, so a run learns which kernels it needs without a compiler run (the
/// fuzzer's kernel prefetch: harness/fuzz/campaign/kernel_prefetch.h). Empty (the default): build.
/// Process-wide; set it only in a process that runs nothing else.
void set_cpu_kernel_collector(CpuKernelCollector collector);

/// The thread budget gbc passes its native kernels: $GBCHECK_THREADS, else every core.
int gbc_kernel_threads();

}  // namespace gbc
