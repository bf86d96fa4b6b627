// The fuzzer's kernel prefetch: gbc's CPU kernels of the next graphs built in one compiler run.
// A fresh graph's check compiles 3 or 4 modules (its first call, then one per guard failure, each
// a host compiler run of 0.1-0.5 s of which 0.09 s is the run's fixed cost: process start,
// precompiled header, assembler, link). The prefetch runs the checks of a batch of graphs first,
// in one sandboxed child, with gbc collecting each module's kernels instead of building them and
// running them in its kernel interpreter (gbc_backend.h, set_cpu_kernel_collector), then builds
// every collected kernel the per-kernel cache lacks in one compiler run and records them there
// (compiler/codegen/cpu_kernel_cache.h). The graphs' own checks, which follow, find their kernels
// cached: the code they run is the code `check` compiles, kernel for kernel, with the same flags;
// only the library holding it differs. A kernel the prefetch did not predict (a graph break or a
// guard decided by a value the interpreter computed differently) is compiled by the check as
// before; a batch that does not compile (a kernel the host compiler rejects) records nothing, so
// each check compiles its own modules and reports the rejection (FB001) as without the prefetch.
// Test: tests/fuzz/kernel_prefetch_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "harness/fuzz/campaign/graph_check.h"
#include "harness/model/model.h"

namespace gbc {

struct KernelPrefetch {
  int graphs = 0;           // graphs whose checks ran in the prefetch
  int kernels = 0;          // distinct kernels they asked for (by cache key)
  int kernels_cached = 0;   // of those, already in the per-kernel cache
  int kernels_built = 0;    // built in the prefetch's compiler runs (one per set of compile options)
  double ms = 0;            // wall time of the whole prefetch
  std::string error;        // why the prefetch stopped early ("" when it ran to the end)
};

/// Whether a prefetch can help these options: a gbc backend on the CPU with the kernel cache on.
bool kernel_prefetch_applies(const GraphCheckOptions& options, const Model& model);

/// Runs the prefetch for `models` in a sandbox limited to twice one graph's options.limits.
KernelPrefetch prefetch_kernels(const std::vector<Model>& models, const GraphCheckOptions& options);

}  // namespace gbc
