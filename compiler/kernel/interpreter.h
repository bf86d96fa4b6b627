// The kernel interpreter: executes a kernel (kernel_ir.h) on the buffers of GbcKernelArgs exactly
// as generated code must, calling the functions of kernel_prelude.h at the same C types (float for
// float32 and half compute, double, the integer types; halves stored as uint16 bits). It is the
// reference the code generators are tested against, runs kernels where no compiler is wanted, and
// lets the bisector read values inside fused kernels.
//
// Expressions are flattened once into programs of typed instructions over registers that each
// hold a chunk of elements, so dispatch costs one indirect call per instruction and chunk.
// Reductions fold each stage sequentially in increasing r.
// Tests: tests/kernel/interpreter_test.cpp.
#pragma once

#include <cstdint>
#include <functional>

#include "compiler/kernel/kernel_abi.h"
#include "compiler/kernel/kernel_ir.h"

namespace gbc {

struct InterpretOptions {
  /// Called with the value of every member node (Kernel::node_values) at every point it is defined
  /// at: `node` indexes Kernel::node_names; `element` is the linear iteration index (i in pointwise
  /// kernels; o * inner + r for full-level values of reduction kernels, whose iteration order puts
  /// the reduced dims last; o for per-row values).
  std::function<void(int node, int64_t element, double value)> observer;
};

/// Runs the kernel. The buffers' index kinds must match the strides in `args` (see specialize.h).
void interpret_kernel(const kir::Kernel& kernel, const GbcKernelArgs& args, const InterpretOptions& options = {});

}  // namespace gbc
