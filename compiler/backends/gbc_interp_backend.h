// The `gbc-interp` backend, the third rung of gbc's ladder: decomp's graph, partitioned into fused
// kernels (elementwise chains, reductions with their prologues and epilogues) that the kernel
// interpreter runs (compiler/kernel/interpreter.h); matmul, linear, bmm and conv2d are extern ATen
// calls inside the graph. A divergence here and not under decomp is the partitioner's or the
// lowering's; one under gbc and not here is the code generator's. Reports what decomp reports plus
// fusion_groups and extern_calls, and FB003 for steps with no lowering.
// Tests: tests/runtime/backends_test.cpp.
#pragma once

#include <memory>

#include "compiler/backends/backend.h"

namespace gbc {

std::unique_ptr<Backend> make_gbc_interp_backend();

}  // namespace gbc
