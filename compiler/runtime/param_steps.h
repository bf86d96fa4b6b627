// Which steps of a kernel plan compute only from the model's params: the [C] reshapes and
// rsqrt(var + eps) of a decomposed eval batch_norm, a transposed weight, ... Their results are the
// same on every call until a param changes, so the runtime computes them once and reuses them
// (param_cache.h, kernel_region.cpp). A step qualifies when every value it reads is a param
// (GraphInput::Role::Param) that nothing in the graph writes into (ATen moves no version counter
// when batch_norm training updates its running stats; region_graph.h marks only params the whole
// program never writes) or the result of a qualifying step, and it cannot change what a later
// call sees: no side effect (print, random ops such as dropout, custom kernels, in-place ops,
// batch_norm training), nothing in the region writes into its results, and none of its results
// may share storage with a region output (each call returns fresh outputs, as eager does).
// Eager steps never qualify. Disabled by the "fold_params" pass switch.
// Tests: tests/runtime/param_fold_test.cpp.
#pragma once

#include <set>
#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/partition/partition.h"

namespace gbc {

struct ParamSteps {
  std::vector<bool> folded;       // per partition step: computed from params only
  std::vector<ValueId> sources;   // the params the folded steps read, first use first
  std::vector<ValueId> results;   // values of folded steps that unfolded steps read, by value id
  bool any() const { return !sources.empty(); }
};

/// `graph` and `partition` as in KernelPlan (after the pipeline, deferred prints already outputs);
/// `written_after`: the graph inputs the plan's write-backs overwrite after the steps (no reader
/// of them is folded either).
ParamSteps find_param_steps(const Graph& graph, const PartitionPlan& partition,
                            const std::set<ValueId>& written_after = {});

}  // namespace gbc
