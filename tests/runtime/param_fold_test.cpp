// Param-only steps computed once (compiler/runtime/param_steps.h, param_cache.h): which steps of a
// plan are marked, that gbc-interp and gbc run them once across calls with the same params and
// still match eager, that an in-place write into a param (directly or through a view), a new param
// tensor, a write by the program itself, or an inference tensor makes them run again, that
// side-effecting, random and output-aliasing steps are never marked, and that explain says what
// happened.
#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "compiler/runtime/graph_runtime.h"
#include "compiler/runtime/kernel_plan.h"
#include "compiler/runtime/param_cache.h"
#include "compiler/runtime/profile.h"
#include "tests/runtime/runtime_test_util.h"

namespace gbc {
namespace {

using test::inputs_for;
using test::load;
using test::options_of;
using test::prepared;

// fold_conv_bn folds the batch_norm into the conv: the param-only steps compute its weight and bias.
const char* kConvBnRelu = R"(format: gbcheck/v1
name: conv_bn_relu
inputs:
  x: {shape: [2, 3, 6, 6]}
params:
  w: {shape: [4, 3, 3, 3]}
  gamma: {shape: [4]}
  beta: {shape: [4]}
  mean: {shape: [4]}
  var: {shape: [4], values: {dist: uniform, low: 0.5, high: 2.0}}
graph:
  - {id: c, op: conv2d, args: [x, w], padding: 1}
  - {id: bn, op: batch_norm, args: [c, gamma, beta, mean, var], training: false, eps: 1.0e-5}
  - {id: y, op: relu, args: [bn]}
outputs: [y]
)";

// Inputs in graph order (x, w, gamma, beta, mean, var) with a positive running variance.
std::vector<at::Tensor> conv_bn_inputs(const Graph& g) {
  std::vector<at::Tensor> in = inputs_for(g, {});
  in[5] = in[5].abs() + 0.5;
  return in;
}

std::vector<std::string> folded_names(const KernelPlan& plan) {
  std::vector<std::string> out;
  for (size_t s = 0; s < plan.partition.steps.size(); ++s)
    if (plan.param_steps.folded[s])
      for (const std::string& n : step_node_names(plan, plan.partition.steps[s])) out.push_back(n);
  return out;
}

// The params the plan's param-only steps read, sorted.
std::vector<std::string> param_source_names(const KernelPlan& plan) {
  std::vector<std::string> out;
  for (ValueId v : plan.param_steps.sources) out.push_back(plan.graph.name_of(v));
  std::sort(out.begin(), out.end());
  return out;
}

// Calls of the steps whose profile rows contain `part` in their names, summed; the rows of
// checking param-only results (kind cached) also list the results, and count only with `kind`.
int64_t calls_of(const Profiler& profiler, const std::string& part, const std::string& kind = "") {
  int64_t n = 0;
  for (const ProfileRow& r : profiler.rows())
    if (r.name.find(part) != std::string::npos && (kind.empty() ? r.kind != "cached" : r.kind == kind)) n += r.calls;
  return n;
}

void expect_eager_result(Backend& backend, const Graph& g, const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> expected = run_eager(g, test::clones(inputs));
  std::vector<at::Tensor> actual = backend.run(inputs);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_TRUE(at::allclose(actual[i], expected[i], 1e-5, 1e-6)) << backend.name() << ": output " << i;
}

TEST(ParamSteps, EvalBatchNormParamWorkIsMarked) {
  Model model = load(kConvBnRelu);
  KernelPlan plan = plan_kernels(model.graph, PlanOptions{});
  EXPECT_EQ(folded_names(plan),
            (std::vector<std::string>{"bn.var_eps", "bn.rstd", "bn.scale", "bn.mean_scaled", "bn.shift", "bn.scale_w",
                                      "bn.folded_weight"}));
  EXPECT_EQ(param_source_names(plan), (std::vector<std::string>{"beta", "gamma", "mean", "var", "w"}));
  EXPECT_EQ(plan.param_steps.results.size(), 2u);  // the conv's folded weight and bias (fold_conv_bn.h)
}

// Without fold_conv_bn the batch_norm stays after the conv: its [C, 1, 1] scale and shift are the
// param-only work (the path of a batch_norm that follows anything but a conv).
TEST(ParamSteps, WithoutFoldConvBnTheBatchNormsScaleAndShiftAreMarked) {
  Model model = load(kConvBnRelu);
  PlanOptions o;
  o.disabled_passes = {"fold_conv_bn"};
  KernelPlan plan = plan_kernels(model.graph, o);
  EXPECT_EQ(folded_names(plan),
            (std::vector<std::string>{"bn.var_eps", "bn.rstd", "bn.scale", "bn.mean_scaled", "bn.shift", "bn.scale_c",
                                      "bn.shift_c"}));
  EXPECT_EQ(param_source_names(plan), (std::vector<std::string>{"beta", "gamma", "mean", "var"}));
  EXPECT_EQ(plan.param_steps.results.size(), 2u);  // the [C, 1, 1] scale and shift the main kernel reads
}

TEST(ParamSteps, NothingIsMarkedWhenFoldParamsIsDisabled) {
  Model model = load(kConvBnRelu);
  PlanOptions o;
  o.disabled_passes = {"fold_params"};
  KernelPlan plan = plan_kernels(model.graph, o);
  EXPECT_TRUE(folded_names(plan).empty());
  EXPECT_FALSE(plan.param_steps.any());
}

TEST(ParamSteps, RandomStepsOutputAliasesAndInputDependentStepsAreNotMarked) {
  Model model = load(R"(format: gbcheck/v1
name: mixed
inputs:
  x: {shape: [4, 6]}
params:
  w: {shape: [6]}
  v: {shape: [6]}
graph:
  - {id: d, op: dropout, args: [w], p: 0.5}
  - {id: e, op: exp, args: [v]}
  - {id: r, op: reshape, args: [v], shape: [1, 6]}
  - {id: a, op: add, args: [x, d]}
  - {id: y, op: mul, args: [a, e]}
outputs: [y, r]
)");
  KernelPlan plan = plan_kernels(model.graph, PlanOptions{});
  // exp(v) is param-only; dropout draws random numbers; r is returned (a fresh view per call, as
  // eager gives); a and y read x.
  EXPECT_EQ(folded_names(plan), (std::vector<std::string>{"e"}));
}

TEST(ParamSteps, StepsWhoseResultsAreWrittenInPlaceAreNotMarked) {
  Model model = load(R"(format: gbcheck/v1
name: inplace
inputs:
  x: {shape: [6]}
params:
  w: {shape: [6]}
graph:
  - {id: r, op: reshape, args: [w], shape: [2, 3]}
  - {id: s, op: add_, args: [w, x]}
  - {id: y, op: mul, args: [r, 2.0]}
outputs: [y]
)");
  KernelPlan plan = plan_kernels(model.graph, PlanOptions{});
  EXPECT_TRUE(folded_names(plan).empty());
}

// Each test prepares GetParam()'s backend for a model with a profiler attached: its rows count how
// often each step ran.
class ParamFold : public ::testing::TestWithParam<std::string> {
 protected:
  Backend& prepare(const Model& model) {
    backend_ = prepared(GetParam(), model, options_of(model));
    auto* runtime = dynamic_cast<GraphRuntime*>(backend_.get());
    EXPECT_NE(runtime, nullptr);
    if (runtime) runtime->set_profiler(&profiler_);
    return *backend_;
  }

  std::unique_ptr<Backend> backend_;
  Profiler profiler_;
};

TEST_P(ParamFold, ParamOnlyStepsRunOnceAndResultsMatchEager) {
  Model model = load(kConvBnRelu);
  Backend& backend = prepare(model);
  std::vector<at::Tensor> in = conv_bn_inputs(model.graph);
  for (int call = 0; call < 4; ++call) {
    in[0] = at::randn({2, 3, 6, 6});  // new activations every call, the same params
    expect_eager_result(backend, model.graph, in);
  }
  EXPECT_EQ(calls_of(profiler_, "[bn.scale_w]"), 1);
  EXPECT_EQ(calls_of(profiler_, "[bn.folded_weight]"), 1);
  EXPECT_EQ(calls_of(profiler_, "extern conv2d"), 4);
  EXPECT_EQ(calls_of(profiler_, "param-only results", "cached"), 4);  // the check itself, every call

  const ProgramDescription d = dynamic_cast<GraphRuntime&>(backend).describe();
  ASSERT_EQ(d.segments.size(), 1u);
  std::string notes;
  for (const StepDescription& s : d.segments[0].entries.at(0).region.steps) notes += s.note + "\n";
  EXPECT_NE(notes.find("param-only: computed on 1 of 4 calls"), std::string::npos) << notes;
}

TEST_P(ParamFold, InPlaceWritesAndNewParamTensorsAreNotStale) {
  Model model = load(kConvBnRelu);
  Backend& backend = prepare(model);
  std::vector<at::Tensor> in = conv_bn_inputs(model.graph);
  expect_eager_result(backend, model.graph, in);
  expect_eager_result(backend, model.graph, in);
  EXPECT_EQ(calls_of(profiler_, "[bn.scale_w]"), 1);

  in[5].add_(1.0);  // running_var, in place
  expect_eager_result(backend, model.graph, in);
  EXPECT_EQ(calls_of(profiler_, "[bn.folded_weight]"), 2);

  in[4].view({2, 2}).select(0, 1).fill_(0.25);  // running_mean, through a view
  expect_eager_result(backend, model.graph, in);
  EXPECT_EQ(calls_of(profiler_, "[bn.scale_w]"), 3);

  in[2] = in[2].clone() * 2.0;  // a new gamma tensor
  expect_eager_result(backend, model.graph, in);
  expect_eager_result(backend, model.graph, in);
  EXPECT_EQ(calls_of(profiler_, "[bn.scale_w]"), 4);
}

TEST_P(ParamFold, AParamTheProgramWritesIsReadFreshOnEveryCall) {
  // add_ into a param is a graph break: graph 0 computes exp(w) from the param alone, and every
  // call writes w after it: a param the program writes is never a source of param-only steps.
  Model model = load(R"(format: gbcheck/v1
name: written_param
inputs:
  x: {shape: [3, 4]}
params:
  w: {shape: [4]}
graph:
  - {id: e1, op: exp, args: [w]}
  - {id: a, op: mul, args: [x, e1]}
  - {id: s, op: add_, args: [w, 0.5]}
  - {id: e2, op: exp, args: [w]}
  - {id: y, op: add, args: [a, e2]}
outputs: [y]
)");
  Backend& backend = prepare(model);
  std::vector<at::Tensor> in = inputs_for(model.graph, {});
  for (int call = 0; call < 3; ++call) expect_eager_result(backend, model.graph, in);
  EXPECT_EQ(backend.stats().graph_breaks, 1);
  EXPECT_EQ(calls_of(profiler_, "param-only results", "cached"), 0);
  EXPECT_EQ(calls_of(profiler_, "[e1]"), 3);
}

TEST_P(ParamFold, AParamWrittenLaterInTheSameGraphIsReadFreshOnTheNextCall) {
  // batch_norm in training mode updates rv after exp(rv) read it, inside one graph (on ATen, whose
  // update does not move rv's version counter, or by gbc's write-back after the steps): rv is not
  // a source of param-only steps.
  Model model = load(R"(format: gbcheck/v1
name: running_stats
inputs:
  x: {shape: [2, 3, 4]}
params:
  w: {shape: [3]}
  b: {shape: [3]}
  rm: {shape: [3]}
  rv: {shape: [3], values: {dist: uniform, low: 0.5, high: 1.5}}
graph:
  - {id: e, op: exp, args: [rv]}
  - {id: n, op: batch_norm, args: [x, w, b, rm, rv], training: true}
  - {id: r, op: reshape, args: [e], shape: [1, 3, 1]}
  - {id: y, op: mul, args: [n, r]}
outputs: [y]
)");
  Backend& backend = prepare(model);
  std::vector<at::Tensor> in = inputs_for(model.graph, {});
  in[4] = in[4].abs() + 0.5;
  for (int call = 0; call < 3; ++call) expect_eager_result(backend, model.graph, in);
  // e is computed on every call (in whichever kernel fuses it), never kept as a param-only result;
  // w's and b's reshapes are, since batch_norm writes only rm and rv.
  EXPECT_EQ(calls_of(profiler_, "[e"), 3);
  for (const ProfileRow& r : profiler_.rows()) {
    if (r.name.find("param-only results") == std::string::npos) continue;
    for (const char* e_in_list : {"[e]", "[e,", " e,", " e]"}) EXPECT_EQ(r.name.find(e_in_list), std::string::npos) << r.name;
  }
}

INSTANTIATE_TEST_SUITE_P(Tiers, ParamFold, ::testing::Values("gbc-interp", "gbc"));

TEST(ParamCache, ReusesOnlyWhatCannotBeStale) {
  at::Tensor p = at::randn({4});
  std::vector<RtValue> env(2);
  env[0] = RtValue::of(p);
  ParamCache cache({0}, {1});
  EXPECT_FALSE(cache.valid(env, {}));
  ASSERT_TRUE(cache.snapshot_sources(env, {}));
  env[1] = RtValue::of(p.exp());
  cache.keep_results(env);
  EXPECT_TRUE(cache.valid(env, {}));
  EXPECT_FALSE(cache.valid(env, {{"N", 2}}));  // other dims

  std::vector<RtValue> other = env;
  other[0] = RtValue::of(p.clone());  // equal values, another tensor
  EXPECT_FALSE(cache.valid(other, {}));

  p.mul_(2.0);
  EXPECT_FALSE(cache.valid(env, {}));
}

TEST(ParamCache, AWriteIntoAKeptResultInvalidatesIt) {
  at::Tensor p = at::randn({4});
  std::vector<RtValue> env(2);
  env[0] = RtValue::of(p);
  ParamCache cache({0}, {1});
  ASSERT_TRUE(cache.snapshot_sources(env, {}));
  at::Tensor r = p.exp();
  env[1] = RtValue::of(r);
  cache.keep_results(env);
  ASSERT_TRUE(cache.valid(env, {}));
  r.view({2, 2}).zero_();
  EXPECT_FALSE(cache.valid(env, {}));
}

TEST(ParamCache, InferenceTensorsAreNeverReused) {
  at::Tensor p;
  {
    c10::InferenceMode guard;
    p = at::randn({4});
  }
  std::vector<RtValue> env(2);
  env[0] = RtValue::of(p);
  ParamCache cache({0}, {1});
  EXPECT_FALSE(cache.snapshot_sources(env, {}));
  EXPECT_FALSE(cache.valid(env, {}));
}

}  // namespace
}  // namespace gbc
