// The kernel plan of a region: fused groups and extern calls on a known graph, FB003 for a step
// with no lowering (batch_norm in training mode) with its location and hint, and no fallback for
// what ATen runs by design; then the same through gbc-interp, which must still match eager, and the
// profiler's rows for the plan's steps.
#include "compiler/runtime/kernel_plan.h"

#include <gtest/gtest.h>

#include <map>

#include "compiler/runtime/graph_runtime.h"
#include "compiler/runtime/profile.h"
#include "tests/runtime/runtime_test_util.h"

namespace gbc {
namespace {

using test::expect_matches_eager;
using test::inputs_for;
using test::load;
using test::options_of;
using test::prepared;

TEST(KernelPlan, MatmulIsAnExternCallBetweenFusedGroups) {
  Model model = load(R"(format: gbcheck/v1
name: mlp
inputs:
  x: {shape: [4, 8]}
  w: {shape: [8, 6]}
graph:
  - {id: a, op: relu, args: [x]}
  - {id: b, op: mul, args: [a, 2.0]}
  - {id: h, op: matmul, args: [b, w]}
  - {id: t, op: tanh, args: [h]}
  - {id: y, op: add, args: [t, 1.0]}
outputs: [y]
)");
  KernelPlan plan = plan_kernels(model.graph, PlanOptions{});
  EXPECT_EQ(plan.kernels.size(), 2u);  // relu+mul before the matmul, tanh+add after it
  EXPECT_EQ(plan.extern_calls, 1);
  EXPECT_TRUE(plan.fallbacks.empty());
}

const char* kTrainingBatchNorm = R"(format: gbcheck/v1
name: bn_train
inputs:
  x: {shape: [2, 3, 4, 4]}
params:
  w: {shape: [3]}
  b: {shape: [3]}
  rm: {shape: [3]}
  rv: {shape: [3], values: {dist: uniform, low: 0.5, high: 1.5}}
graph:
  - {id: a, op: relu, args: [x]}
  - {id: y, op: batch_norm, args: [a, w, b, rm, rv], training: true}
outputs: [y]
)";

TEST(KernelPlan, TrainingBatchNormIsFB003) {
  Model model = load(kTrainingBatchNorm, "bn.yaml");
  KernelPlan plan = plan_kernels(model.graph, PlanOptions{});
  ASSERT_EQ(plan.fallbacks.size(), 1u);
  const CompileEvent& e = plan.fallbacks[0];
  EXPECT_EQ(e.code, "FB003");
  EXPECT_EQ(e.op, "batch_norm");
  EXPECT_EQ(e.loc.str(), "bn.yaml:12:5");
  EXPECT_NE(e.message.find("batch_norm has no lowering in a compiled graph"), std::string::npos) << e.message;
  EXPECT_NE(e.hint.find("training: false"), std::string::npos) << e.hint;
}

TEST(KernelPlan, FallbackIsReportedByTheBackendAndStillMatchesEager) {
  Model model = load(kTrainingBatchNorm, "bn.yaml");
  std::unique_ptr<Backend> backend = prepared("gbc-interp", model, options_of(model));
  expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {}));
  ASSERT_EQ(backend->stats().fallbacks, 1);
  EXPECT_EQ(backend->stats().events.at(0).code, "FB003");
  EXPECT_EQ(backend->stats().graph_breaks, 0);
}

TEST(KernelPlan, ProfilerGetsARowPerStep) {
  Model model = load(R"(format: gbcheck/v1
name: prof
inputs:
  x: {shape: [4, 8]}
  w: {shape: [8, 6]}
graph:
  - {id: h, op: matmul, args: [x, w]}
  - {id: y, op: tanh, args: [h]}
  - {op: print, args: [y]}
outputs: [y]
)");
  std::unique_ptr<Backend> backend = prepared("gbc-interp", model, options_of(model));
  auto* runtime = dynamic_cast<GraphRuntime*>(backend.get());
  ASSERT_NE(runtime, nullptr);
  Profiler profiler;
  runtime->set_profiler(&profiler);
  for (int i = 0; i < 3; ++i) backend->run(inputs_for(model.graph, {}));
  std::map<std::string, int64_t> calls_by_kind;
  for (const ProfileRow& r : profiler.rows()) calls_by_kind[r.kind] += r.calls;
  EXPECT_EQ(calls_by_kind["kernel"], 3);
  EXPECT_EQ(calls_by_kind["extern"], 3);
  EXPECT_EQ(calls_by_kind["island"], 3);
}

}  // namespace
}  // namespace gbc
