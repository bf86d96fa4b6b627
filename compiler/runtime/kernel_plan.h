// From a region graph to what gbc-interp and gbc run: the graph pipeline (pass_manager.h), then
// the fusion partition (partition.h) and one lowered kernel per fusion group (lower.h). Prints that
// run after the region (check.reorderable_logging) leave the graph here, and the values they read
// become extra outputs, so fusion is not split at them and the values are still materialized.
// So do write-backs: a copy_ into a graph input that nothing reads afterwards (decompose writes
// batch_norm's running stats so) runs after the region's steps, its source an extra output, as
// torch.compile's functionalization writes mutated inputs back after its graph.
// Steps that run on ATen although the graph is compiled, when no lowering exists for them (an
// undecomposed normalization, an in-place op the pipeline could not remove, ...), are FB003
// fallbacks; extern calls (matmul, linear, bmm, conv2d) and view, cat, full, dropout and custom
// kernels with meta run on ATen by design and are not. Steps that compute only from params are
// marked (param_steps.h) for the runtime to compute once. No torch here.
// Tests: tests/runtime/kernel_plan_test.cpp.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/kernel/lower.h"
#include "compiler/partition/partition.h"
#include "compiler/runtime/compile_event.h"
#include "compiler/runtime/param_steps.h"

namespace gbc {

struct PlanOptions {
  // Pipeline passes, "fuse" for the partitioner and "fold_params" for marking param-only steps.
  std::vector<std::string> disabled_passes;
  bool capture_scalar_outputs = false;       // an item step in a region is deliberate
  LowerOptions::Target target = LowerOptions::Target::Cpu;
  InjectedFault fault = InjectedFault::None; // --inject-fault: the kernels are built with this bug
  std::set<OpId> half_numbers_in_float32;  // LowerOptions: ATen's semantics on the target device
};

struct KernelPlan {
  Graph graph;  // after the pipeline; deferred prints and write-backs removed
  PartitionPlan partition;
  std::vector<LoweredKernel> kernels;  // one per partition group, named fused_<group>
  std::vector<Node> prints;            // deferred prints, in program order
  std::vector<Node> write_backs;       // copy_ into graph inputs, run after the steps, in program order
  size_t num_outputs = 0;              // graph.outputs[0, num_outputs) are the region's outputs
  ParamSteps param_steps;              // folded[s] for partition.steps[s]; none when "fold_params" is off
  std::vector<CompileEvent> fallbacks; // FB003, one per step
  int extern_calls = 0;
};

KernelPlan plan_kernels(const Graph& region, const PlanOptions& options);

/// The nodes a step computes, printed one per line (for explain, kernels logs and profiles).
std::vector<std::string> step_node_names(const KernelPlan& plan, const Step& step);

}  // namespace gbc
