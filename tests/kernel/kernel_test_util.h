// Helpers shared by the kernel tests: run a model eagerly keeping every intermediate value, and run
// one fusion group end to end (lower, then a KernelCall as the runtime makes it: specialize for the
// tensors' real strides, interpret into ATen-allocated outputs) so its results can be compared with
// eager's values of the same ids.
#pragma once

#include <ATen/ops/isinf.h>
#include <ATen/ops/isnan.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "compiler/aten/aten_convert.h"
#include "compiler/aten/aten_semantics.h"
#include "compiler/aten/eager_executor.h"
#include "compiler/kernel/interpreter.h"
#include "compiler/kernel/lower.h"
#include "compiler/kernel/specialize.h"
#include "compiler/partition/partition.h"
#include "compiler/runtime/kernel_call.h"
#include "tests/aten/aten_test_util.h"

namespace gbc::testing {

/// Every value of the graph after an eager run: graph inputs, then each node's values.
inline std::map<ValueId, RtValue> eager_values(const Graph& g, const std::vector<at::Tensor>& inputs) {
  std::map<ValueId, RtValue> env;
  for (size_t i = 0; i < inputs.size(); ++i) env[g.inputs.at(i).value] = RtValue::of(inputs[i]);
  EagerOptions options;
  options.on_value = [&](const Node&, ValueId v, const RtValue& value) { env[v] = value; };
  run_eager(g, inputs, options);
  return env;
}

struct GroupRun {
  LoweredKernel lowered;
  Specialization spec;
  std::vector<at::Tensor> outputs;  // group.outputs order, contiguous in their own shapes
};

/// Passes every node value an interpreted kernel reports to a function.
class FunctionObserver : public KernelObserver {
 public:
  explicit FunctionObserver(std::function<void(int, int64_t, double)> f) : f_(std::move(f)) {}
  void node_value(int node, int64_t element, double value) override { f_(node, element, value); }

 private:
  std::function<void(int, int64_t, double)> f_;
};

/// Lowers a group of g.body, specializes it for the strides of its inputs in `env`, and interprets
/// it into fresh contiguous outputs.
inline GroupRun run_group(const Graph& g, const FusionGroup& group, const std::map<ValueId, RtValue>& env,
                          const DimBindings& bindings, const LowerOptions& lower_options = {},
                          const InterpretOptions& interpret_options = {}) {
  GroupRun run;
  LowerOptions lower = lower_options;
  lower.half_numbers_in_float32 = aten_semantics(c10::Device(c10::kCPU)).half_numbers_in_float32;  // as the runtime does
  run.lowered = lower_group(g, g.body, group, "k", lower);
  const LoweredKernel& lk = run.lowered;
  std::vector<RtValue> values(g.values.size());
  for (const auto& [v, value] : env) values.at(static_cast<size_t>(v)) = value;
  KernelCall call(g, group, lk);
  call.bind(values, bindings, c10::Device(c10::kCPU));
  run.spec = call.specialize();
  FunctionObserver observer(interpret_options.observer);
  call.run(specialized_kernel(lk.kernel, run.spec), {}, 1, interpret_options.observer ? &observer : nullptr);
  for (size_t b = 0; b < lk.kernel.buffers.size(); ++b)
    if (lk.kernel.buffers[b].is_output) run.outputs.push_back(values[static_cast<size_t>(lk.buffer_values[b])].tensor);
  return run;
}

/// Element-wise closeness: |got - want| <= atol + rtol * |want|, NaN equal to NaN, infinities equal
/// when of the same sign; rtol = atol = 0 demands identical values (and dtypes).
inline ::testing::AssertionResult close(const at::Tensor& got, const at::Tensor& want, double rtol = 0.0,
                                        double atol = 0.0) {
  if (got.scalar_type() != want.scalar_type())
    return ::testing::AssertionFailure() << "dtype " << got.scalar_type() << " vs " << want.scalar_type();
  if (got.sizes() != want.sizes()) return ::testing::AssertionFailure() << "sizes " << got.sizes() << " vs " << want.sizes();
  at::Tensor g = got.to(at::kDouble).contiguous().reshape({-1}), w = want.to(at::kDouble).contiguous().reshape({-1});
  auto gv = g.accessor<double, 1>(), wv = w.accessor<double, 1>();
  for (int64_t i = 0; i < g.numel(); ++i) {
    double a = gv[i], b = wv[i];
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b && std::signbit(a) == std::signbit(b)) continue;
    if (std::isinf(a) || std::isinf(b) || std::isnan(a) || std::isnan(b) || std::fabs(a - b) > atol + rtol * std::fabs(b) ||
        (rtol == 0.0 && atol == 0.0))
      return ::testing::AssertionFailure() << "element " << i << ": got " << a << ", want " << b << " (of " << g.numel()
                                           << ")";
  }
  return ::testing::AssertionSuccess();
}

/// The names of a group's member nodes.
inline std::vector<std::string> member_names(const Graph& g, const FusionGroup& group) {
  std::vector<std::string> out;
  for (size_t n : group.nodes) out.push_back(g.name_of(g.body.nodes[n].output()));
  return out;
}

}  // namespace gbc::testing
