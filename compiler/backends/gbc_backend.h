// The `gbc` backend, the top of gbc's ladder and check.backends' default: gbc-interp's fused
// kernels compiled to native code. Each region specialization's kernels go into one C++
// translation unit (compiler/codegen/cpu_codegen.h), built by the host compiler, cached on disk by
// content and loaded with dlopen (cpu_compiler.h). The first call of a specialization runs its
// kernels in the interpreter while their layouts are recorded; the module is built right after,
// and later calls run native code on up to $GBCHECK_THREADS threads (default: every core). A
// module that does not compile is a fallback (FB001, with the compiler's first error line; the full
// output on --log kernels) and its kernels' nodes run on ATen. Reports what gbc-interp reports;
// compile_ms includes the C++ compiler. Tests: tests/runtime/backends_test.cpp.
#pragma once

#include <memory>

#include "compiler/backends/backend.h"

namespace gbc {

std::unique_ptr<Backend> make_gbc_backend();

/// The thread budget gbc passes its native kernels: $GBCHECK_THREADS, else every core.
int gbc_kernel_threads();

}  // namespace gbc
