// gbc's CPU kernels compiled once across graphs. A graph's module of kernels is looked up kernel
// by kernel: each kernel's key is the content hash (cpu_cache_key) of its code generated under
// canonical names (kernel and buffer names only name things: fuzzed graphs repeat the same
// kernels under other names), with the shared header, the flags, the compiler and the CPU. A
// kernel found in the cache is resolved from the library an earlier module built it into
// (`<key>.kernel` in the cache folder names that library and the kernel's symbol there); the
// kernels not found are compiled together, in one module with their own names, and recorded.
// The code compiled is the code `check` would compile for that module, kernel for kernel; only
// which library holds it differs. A fuzz campaign's fresh graphs repeat about a quarter of the
// kernels of the graphs before them (docs/fuzzing.md), more over a night. A record whose library
// is gone or does not load is a miss. Without the cache (use_cache false) this is compile_cpu()
// of the whole module. Tests: tests/codegen/cpu_kernel_cache_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "compiler/codegen/cpu_compiler.h"
#include "compiler/kernel/kernel_ir.h"

namespace gbc::codegen {

struct CpuKernelsBuild {
  /// ok, log, compile_ms and one entry point per kernel, in order; cache_hit when no kernel was
  /// compiled; library_path: the library built for the kernels that missed (empty if none did).
  CpuCompileResult result;
  /// Kernels resolved from the per-kernel cache.
  int kernels_from_cache = 0;
  /// The generated source compiled (the kernels that missed), empty when nothing was compiled.
  std::string compiled_source;
};

/// Native code for `kernels` (distinct names, as in one generated module named `module`).
CpuKernelsBuild compile_cpu_kernels(const std::vector<kir::Kernel>& kernels, const std::string& module,
                                    const CpuCompileOptions& options);

/// The key a kernel is cached under (exposed for tests).
std::string cpu_kernel_key(const kir::Kernel& kernel, const CpuCompileOptions& options);

}  // namespace gbc::codegen
