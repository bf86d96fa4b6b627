// Layout prediction before a region's first call: kernels reading ATen steps (a transposed matmul,
// a cat) are predicted from meta runs of those steps, with the strides the real run gives them;
// dropout is never run (it draws random numbers) and only a contiguous input's result is taken for
// contiguous; and a compiled call then builds one module, not one per kernel.
#include "compiler/runtime/predicted_layouts.h"

#include <gtest/gtest.h>

#include "compiler/codegen/cpu_compiler.h"
#include "tests/runtime/runtime_test_util.h"

namespace gbc {
namespace {

using test::inputs_for;
using test::load;

const char* kAtenStepsBetweenKernels = R"(format: gbcheck/v1
name: aten_steps
inputs:
  x: {shape: [4, 6]}
  w: {shape: [6, 5]}
graph:
  - {id: a, op: relu, args: [x]}
  - {id: m, op: matmul, args: [a, w]}
  - {id: t, op: transpose, args: [m], dim0: 0, dim1: 1}
  - {id: y, op: tanh, args: [t]}
  - {id: c, op: cat, args: [x, a], dim: 0}
  - {id: z, op: exp, args: [c]}
outputs: [y, z]
)";

// env as a region call sees it: the graph's inputs at their values.
std::vector<RtValue> env_of(const Graph& g, const std::vector<at::Tensor>& inputs) {
  std::vector<RtValue> env(g.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) env[static_cast<size_t>(g.inputs[i].value)] = RtValue::of(inputs[i]);
  return env;
}

// The plan kernel whose group computes the node with this id.
size_t kernel_computing(const KernelPlan& plan, const std::string& id) {
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const LoweredKernel& lk = plan.kernels[k];
    for (size_t b = 0; b < lk.buffer_values.size(); ++b)
      if (lk.kernel.buffers[b].is_output && plan.graph.name_of(lk.buffer_values[b]) == id) return k;
  }
  ADD_FAILURE() << "no kernel computes " << id;
  return 0;
}

TEST(PredictedLayouts, KernelsReadingAtenStepsArePredictedThroughMetaRuns) {
  Model model = load(kAtenStepsBetweenKernels);
  KernelPlan plan = plan_kernels(model.graph, PlanOptions{});
  ASSERT_EQ(plan.kernels.size(), 3u);  // relu; tanh of the transposed matmul; exp of the cat
  const DimBindings dims;
  std::vector<std::optional<std::vector<BufferLayout>>> layouts =
      predict_kernel_layouts(plan, env_of(plan.graph, inputs_for(model.graph, dims)), dims);
  for (size_t k = 0; k < layouts.size(); ++k) EXPECT_TRUE(layouts[k].has_value()) << plan.kernels[k].kernel.name;

  // tanh iterates y's [5, 4]; it reads the transposed [4, 5] matmul result: strides (1, 5).
  const size_t tanh_kernel = kernel_computing(plan, "y");
  ASSERT_TRUE(layouts[tanh_kernel].has_value());
  const BufferLayout& read = layouts[tanh_kernel]->front();
  EXPECT_EQ(read.sizes, (std::vector<int64_t>{5, 4}));
  EXPECT_EQ(read.strides, (std::vector<int64_t>{1, 5}));
  // exp reads the cat's fresh [8, 6] tensor: contiguous.
  const size_t exp_kernel = kernel_computing(plan, "z");
  ASSERT_TRUE(layouts[exp_kernel].has_value());
  EXPECT_EQ(layouts[exp_kernel]->front().strides, (std::vector<int64_t>{6, 1}));
}

TEST(PredictedLayouts, DropoutOfAContiguousTensorIsTakenToBeContiguousWithoutRunningIt) {
  Model model = load(R"(format: gbcheck/v1
name: behind_dropout
inputs:
  x: {shape: [4, 6]}
graph:
  - {id: a, op: relu, args: [x]}
  - {id: d, op: dropout, args: [a], p: 0.5}
  - {id: y, op: exp, args: [d]}
  - {id: t, op: transpose, args: [x], dim0: 0, dim1: 1}
  - {id: e, op: dropout, args: [t], p: 0.5}
  - {id: z, op: exp, args: [e]}
outputs: [y, z]
)");
  KernelPlan plan = plan_kernels(model.graph, PlanOptions{});
  ASSERT_EQ(plan.kernels.size(), 3u);
  const DimBindings dims;
  std::vector<at::Tensor> inputs = inputs_for(model.graph, dims);
  at::manual_seed(5);
  const at::Tensor expected_draw = at::rand({8});
  at::manual_seed(5);
  std::vector<std::optional<std::vector<BufferLayout>>> layouts =
      predict_kernel_layouts(plan, env_of(plan.graph, inputs), dims);
  EXPECT_TRUE(at::equal(at::rand({8}), expected_draw)) << "prediction drew random numbers";
  EXPECT_TRUE(layouts[kernel_computing(plan, "a")].has_value());
  ASSERT_TRUE(layouts[kernel_computing(plan, "y")].has_value());
  EXPECT_EQ(layouts[kernel_computing(plan, "y")]->front().strides, (std::vector<int64_t>{6, 1}));
  // Dropout of a transposed view: ATen's result layout is not taken for granted.
  EXPECT_FALSE(layouts[kernel_computing(plan, "z")].has_value());
}

TEST(PredictedLayouts, AFirstCompiledCallBuildsOneModule) {
  Model model = load(kAtenStepsBetweenKernels);
  BackendOptions options = test::options_of(model);
  options.use_cache = false;
  std::unique_ptr<Backend> gbc = test::prepared("gbc", model, options);
  const int64_t before = codegen::cpu_compiler_invocations();
  gbc->run(inputs_for(model.graph, {}));
  EXPECT_EQ(codegen::cpu_compiler_invocations(), before + 1);
}

}  // namespace
}  // namespace gbc
