// Lowering of one fusion group (compiler/partition/partition.h) to a kernel (kernel_ir.h).
//
// Each member node becomes expressions with ATen's exact dtype rules made explicit as Casts:
// binary ops compute in the result type, comparisons and logical ops in the promoted common type,
// true division of integers in float32; numbers in args become constants of the common type the
// way ATen converts wrapped numbers (so `float16 * 0.1` multiplies by 0.1 rounded to float16).
// Reductions become stages with accumulators chosen for the target: float sums and products in
// float64 on the CPU (the fp64 oracle then compares against eager's own error) and in float32 on
// CUDA; integer sums in int64. mean, var and logsumexp that reach the lowering undecomposed get
// their own stages. Every expression is tagged with the member node it belongs to.
// Buffers start Contiguous; specialize.h picks their index kinds for concrete layouts.
// Tests: tests/kernel/lower_test.cpp, tests/kernel/interpreter_test.cpp.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/kernel/kernel_ir.h"
#include "compiler/partition/partition.h"

namespace gbc {

struct LoweredKernel {
  kir::Kernel kernel;  // node_names[k] is group.nodes[k]
  std::vector<ValueId> buffer_values;  // per kernel buffer: the graph value it holds
  // Per kernel buffer, for each dim of its value's shape: the dim of iter_shape it runs along
  // (NumPy broadcasting, right-aligned; a size-1 dim broadcasts). Outer-level buffers run along
  // kept dims only; their dims that face reduced dims have size 1.
  std::vector<std::vector<int>> buffer_dims;
  SymShape iter_shape;            // full iteration shape
  std::vector<int> reduced_dims;  // reduction kernels: dims of iter_shape reduced (iterated last), ascending
  std::vector<ValueId> scalar_values;  // per kernel scalar arg: the host scalar it holds
};

struct LowerOptions {
  enum class Target { Cpu, Cuda } target = Target::Cpu;
  InjectedFault fault = InjectedFault::None;  // --inject-fault (fault_injection.h); lowering holds const, nan-drop and assert
  // Binary ops whose numbers next to float16/bfloat16 tensors stay float32 instead of being rounded
  // to the tensor's dtype: what ATen does for them (compiler/aten/aten_semantics.h; the runtime asks).
  std::set<OpId> half_numbers_in_float32;
};

LoweredKernel lower_group(const Graph& graph, const Block& block, const FusionGroup& group,
                          const std::string& kernel_name, const LowerOptions& options = {});

}  // namespace gbc
