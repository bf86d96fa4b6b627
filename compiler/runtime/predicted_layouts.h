// The layouts a call will give each fused kernel's buffers, known before the call runs, so that
// a call's variants compile in one module before its first launch (one compiler run instead of one
// per kernel). A buffer's layout is predictable when it holds a region input (the call's tensor),
// a kernel output (always allocated contiguous by kernel_region.cpp), or what an ATen step makes
// (matmul, view, cat, ...) from predictable inputs: the step runs on meta tensors, which have
// sizes and strides but no data. Random and custom ops are not run that way (they may touch global
// state): dropout of a contiguous tensor is taken to be contiguous, and kernels reading a custom
// op are compiled when reached. A wrong prediction costs only an unused variant. Tests: tests/runtime/predicted_layouts_test.cpp, tests/codegen/cuda_corpus_test.cpp.
#pragma once

#include <optional>
#include <vector>

#include "compiler/aten/runtime_value.h"
#include "compiler/kernel/specialize.h"
#include "compiler/runtime/kernel_plan.h"

namespace gbc {

/// Per plan kernel (plan.kernels order): every buffer's layout in iteration order, or nullopt.
/// env holds the region's inputs at their graph values; bindings binds its symbolic dims.
std::vector<std::optional<std::vector<BufferLayout>>> predict_kernel_layouts(const KernelPlan& plan,
                                                                            const std::vector<RtValue>& env,
                                                                            const DimBindings& bindings);

}  // namespace gbc
