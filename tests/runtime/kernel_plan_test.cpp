// The kernel plan of a region: fused groups and extern calls on a known graph, batch_norm in
// training mode fused with its running stats written back after the steps (or in place, where a
// later node reads them), FB003 for a step with no lowering (batch_norm over a symbolic batch) with
// its location and hint, and no fallback for what ATen runs by design; then the same through
// gbc-interp, which must still match eager (outputs and updated params), and the profiler's rows.
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

// A model with batch_norm in training mode over x [batch, 3, 4, 4] and the lines given after it.
std::string training_batch_norm(const std::string& batch, const std::string& graph_rest, const std::string& outputs) {
  return "format: gbcheck/v1\nname: bn_train\n" + std::string(batch == "N" ? "dims: {N: [1, 3]}\n" : "") +
         "inputs:\n  x: {shape: [" + batch + ", 3, 4, 4]}\n" +
         R"(params:
  w: {shape: [3]}
  b: {shape: [3]}
  rm: {shape: [3]}
  rv: {shape: [3], values: {dist: uniform, low: 0.5, high: 1.5}}
graph:
  - {id: a, op: relu, args: [x]}
  - {id: y, op: batch_norm, args: [a, w, b, rm, rv], training: true}
)" + graph_rest + "outputs: [" + outputs + "]\n";
}

const std::string kTrainingBatchNorm = training_batch_norm("2", "", "y");

TEST(KernelPlan, TrainingBatchNormFusesAndWritesItsRunningStatsBackAfterTheSteps) {
  Model model = load(kTrainingBatchNorm, "bn.yaml");
  KernelPlan plan = plan_kernels(model.graph, PlanOptions{});
  EXPECT_TRUE(plan.fallbacks.empty());
  ASSERT_EQ(plan.write_backs.size(), 2u);
  EXPECT_EQ(plan.graph.name_of(plan.write_backs[0].args[0].value), "rm");
  EXPECT_EQ(plan.graph.name_of(plan.write_backs[1].args[0].value), "rv");
  for (const Node& n : plan.graph.body.nodes) EXPECT_NE(n.op, OpId::CopyInPlace) << "a write-back stayed a step";
  // The written values are materialized: extra outputs after the region's own.
  EXPECT_EQ(plan.num_outputs, 1u);
  EXPECT_EQ(plan.graph.outputs.size(), 3u);

  std::unique_ptr<Backend> backend = prepared("gbc-interp", model, options_of(model));
  for (int call = 0; call < 2; ++call)  // the second call starts from the stats the first wrote
    expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {}));
  EXPECT_EQ(backend->stats().fallbacks, 0);
  EXPECT_EQ(backend->stats().graph_breaks, 0);
}

// rm is read after batch_norm wrote it.
const std::string kReadAfterWrite = training_batch_norm("2", "  - {id: m, op: mul, args: [rm, 2.0]}\n", "y, m");

TEST(KernelPlan, AWriteBackStaysInPlaceWhenALaterNodeReadsTheParam) {
  // rm is read after batch_norm wrote it: the copy_ must run before that read, as a step (FB003).
  Model model = load(kReadAfterWrite, "bn.yaml");
  KernelPlan plan = plan_kernels(model.graph, PlanOptions{});
  ASSERT_EQ(plan.write_backs.size(), 1u);  // rv's
  EXPECT_EQ(plan.graph.name_of(plan.write_backs[0].args[0].value), "rv");
  ASSERT_EQ(plan.fallbacks.size(), 1u);
  EXPECT_EQ(plan.fallbacks[0].op, "copy_");
}

TEST(KernelPlan, FallbackIsReportedByTheBackendAndStillMatchesEager) {
  Model model = load(kReadAfterWrite, "bn.yaml");
  std::unique_ptr<Backend> backend = prepared("gbc-interp", model, options_of(model));
  expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {}));
  ASSERT_EQ(backend->stats().fallbacks, 1);
  EXPECT_EQ(backend->stats().events.at(0).code, "FB003");
  EXPECT_EQ(backend->stats().events.at(0).op, "copy_");
  EXPECT_EQ(backend->stats().graph_breaks, 0);
}

// With a batch of symbolic size the count is summed at run time, so the batch_norm is decomposed
// and fuses as with a constant batch (it ran on ATen before, which made its numerics depend on the
// layout gbc gave its input: the fuzzer's seed 7401394).
const std::string kSymbolicBatchNorm = training_batch_norm("N", "", "y");

TEST(KernelPlan, TrainingBatchNormOverASymbolicBatchIsDecomposed) {
  Model model = load(kSymbolicBatchNorm, "bn.yaml");
  KernelPlan plan = plan_kernels(model.graph, PlanOptions{});
  EXPECT_TRUE(plan.fallbacks.empty());
  ASSERT_EQ(plan.write_backs.size(), 2u);
}

// Where a binding of the dims leaves 1 value per channel, ATen raises; gbc leaves the batch_norm to
// it (FB003) rather than compute a variance of one value.
TEST(KernelPlan, TrainingBatchNormThatMayHaveOneValuePerChannelIsFB003) {
  Model model = load(R"(format: gbcheck/v1
name: bn_train
dims: {N: [1, 3]}
inputs:
  x: {shape: [N, 3]}
params:
  w: {shape: [3]}
  b: {shape: [3]}
  rm: {shape: [3]}
  rv: {shape: [3]}
graph:
  - {id: y, op: batch_norm, args: [x, w, b, rm, rv], training: true}
outputs: [y]
)", "bn.yaml");
  KernelPlan plan = plan_kernels(model.graph, PlanOptions{});
  ASSERT_EQ(plan.fallbacks.size(), 1u);
  const CompileEvent& e = plan.fallbacks[0];
  EXPECT_EQ(e.code, "FB003");
  EXPECT_EQ(e.op, "batch_norm");
  EXPECT_EQ(e.loc.str(), "bn.yaml:12:5");
  EXPECT_NE(e.message.find("batch_norm has no lowering in a compiled graph"), std::string::npos) << e.message;
  EXPECT_NE(e.hint.find("training: false"), std::string::npos) << e.hint;
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
