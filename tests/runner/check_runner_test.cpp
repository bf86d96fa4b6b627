// The check runner end to end with planted faults: a test-only backend runs eager and then breaks
// its result in one way, and the report must name the oracle that catches it, shrink the case,
// and give a --shrink path that replays the failure. Also per-output tolerances, the error statistic
// and oracle selection, identical reseeding of random ops, eager's self-check (unusable reference),
// the JSON report and the drift plot; another backend as the reference (--reference); and the sign
// of zeros judged where IEEE pins it (a sub miscompiled into an add).
#include "harness/runner/check_runner.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>

#include "compiler/aten/eager_executor.h"
#include "harness/model/model_loader.h"
#include "harness/runner/case_run.h"
#include "harness/runner/case_run.h"
#include "harness/runner/judge_plan.h"
#include "harness/report/drift_plot.h"
#include "harness/report/json_report.h"
#include "harness/report/terminal_report.h"
#include "tests/reduce/planted_backends.h"

namespace gbc {
namespace {

using Fault = std::function<void(std::vector<at::Tensor>& outputs, const std::vector<at::Tensor>& inputs, int call)>;

// Eager with a fault applied to each result. `call` counts runs, so faults can vary between runs.
class PlantedBackend : public Backend {
 public:
  explicit PlantedBackend(Fault fault) : fault_(std::move(fault)) {}
  std::string name() const override { return "planted"; }
  void prepare(const Graph& graph, const BackendOptions&) override { graph_ = graph; }
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs) override {
    std::vector<at::Tensor> out = run_eager(graph_, inputs);
    if (fault_) fault_(out, inputs, calls_++);
    return out;
  }
  const BackendStats& stats() const override { return stats_; }

 private:
  Fault fault_;
  Graph graph_;
  BackendStats stats_;
  int calls_ = 0;
};

RunOptions options_for(const Model& m, Fault fault) {
  RunOptions o = run_options_from_model(m);
  o.backends = {"planted"};
  o.extra_backends.push_back({"planted", "eager with a planted fault",
                              [fault] { return std::make_unique<PlantedBackend>(fault); }, true});
  return o;
}

const char* kSumModel = R"(format: gbcheck/v1
name: rowsum
dims: {B: [1, 8], D: [1, 64]}
inputs:
  x: {shape: [B, D], dtype: float32}
graph:
  - {id: y, op: sum, args: [x], dim: 1}
outputs: [y]
check:
  cases: 6
)";

TEST(RunnerTest, GenuineAgreementPassesEveryOracle) {
  Model m = load_model_text(kSumModel, "rowsum.yaml");
  CheckReport r = run_check(m, options_for(m, nullptr));
  EXPECT_TRUE(r.pass());
  EXPECT_EQ(r.cases_judged, 6);
  EXPECT_EQ(r.oracles.size(), 8u);
  EXPECT_EQ(r.backends[0].cases_run, 6);
}

TEST(RunnerTest, PerturbedElementFailsIsShrunkAndReplays) {
  Model m = load_model_text(kSumModel, "rowsum.yaml");
  // Wrong only when the row is long enough: shrinking must stop at D = 3.
  Fault fault = [](std::vector<at::Tensor>& out, const std::vector<at::Tensor>& in, int) {
    if (in[0].size(1) >= 3) out[0][0] += 0.25;
  };
  RunOptions opt = options_for(m, fault);
  CheckReport r = run_check(m, opt);
  ASSERT_FALSE(r.pass());
  EXPECT_EQ(r.exit_code(), kExitDivergence);
  const CaseFailure& f = r.backends[0].failures.at(0);
  ASSERT_EQ(f.outputs.size(), 1u);
  EXPECT_EQ(f.outputs[0].oracle, "fp64");
  EXPECT_NE(f.outputs[0].min_passing.find("atol"), std::string::npos);
  ASSERT_TRUE(f.shrunk.has_value()) << f.shrink_note;
  EXPECT_EQ(f.shrunk->dims.at("B"), 1);
  EXPECT_EQ(f.shrunk->dims.at("D"), 3);
  EXPECT_EQ(f.shrunk->outputs.at(0).oracle, "fp64");

  RunOptions replay = opt;
  replay.only_case = f.index;
  replay.shrink_path = *ShrinkPath::parse(f.shrunk->path);
  CheckReport rr = run_check(m, replay);
  ASSERT_EQ(rr.backends[0].cases_failed, 1);
  EXPECT_EQ(rr.backends[0].failures[0].dims, f.shrunk->dims);
  EXPECT_EQ(rr.backends[0].failures[0].shrink_path, f.shrunk->path);

  std::ostringstream text;
  print_terminal_report(r, text, {});
  EXPECT_NE(text.str().find("--case " + std::to_string(f.index) + " --shrink " + f.shrunk->path), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("[fp64]"), std::string::npos) << text.str();
  nlohmann::json j = check_report_to_json(r);
  const auto& jf = j["backends"][0]["failures"][0];
  EXPECT_EQ(jf["shrunk"]["path"], f.shrunk->path);
  EXPECT_EQ(jf["outputs"][0]["failed_oracles"][0], "fp64");
  EXPECT_FALSE(jf["outputs"][0]["verdicts"].empty());
}

TEST(RunnerTest, DroppedNanFailsTheNanInfOracle) {
  std::string text = kSumModel;
  text.replace(text.find("op: sum, args: [x], dim: 1"), 26, "op: amax, args: [x], dim: 1");
  text += "  special_values: 0.2\n";
  Model m = load_model_text(text, "rowmax.yaml");
  CheckReport r = run_check(m, options_for(m, [](std::vector<at::Tensor>& out, const std::vector<at::Tensor>&, int) {
                              out[0] = out[0].nan_to_num(0.0, INFINITY, -INFINITY);
                            }));
  ASSERT_FALSE(r.pass());
  EXPECT_EQ(r.backends[0].failures.at(0).outputs.at(0).oracle, "nan_inf");
  ASSERT_TRUE(r.backends[0].failures[0].shrunk);
  EXPECT_NE(r.backends[0].failures[0].shrunk->inputs.at(0).find("1 special value (nan)"), std::string::npos)
      << r.backends[0].failures[0].shrunk->inputs[0];
  // The JSON says no tolerance passes a different NaN/Inf pattern, with the tolerance comparison's
  // stats (once 0.0 everywhere: the pattern oracle measures nothing itself).
  const nlohmann::json stats = check_report_to_json(r)["backends"][0]["failures"][0]["outputs"][0]["stats"];
  EXPECT_EQ(stats["required_rtol"], "inf") << stats.dump();
  EXPECT_EQ(stats["required_atol"], "inf") << stats.dump();
  EXPECT_GT(stats["mismatched"].get<int64_t>(), 0) << stats.dump();
}

TEST(RunnerTest, NondeterminismIsReportedWithWhere) {
  Model m = load_model_text(kSumModel, "rowsum.yaml");
  CheckReport r = run_check(m, options_for(m, [](std::vector<at::Tensor>& out, const std::vector<at::Tensor>&, int call) {
                              if (call % 2) out[0] = out[0] + 1e-7 * out[0].abs().max();
                            }));
  ASSERT_FALSE(r.pass());
  const OutputCheck& o = r.backends[0].failures.at(0).outputs.at(0);
  EXPECT_EQ(o.oracle, "determinism");
  EXPECT_NE(o.detail.find("first at ["), std::string::npos) << o.detail;
}

TEST(RunnerTest, WritingIntoAnInputTheModelNeverWritesFailsTheStateOracle) {
  Model m = load_model_text(kSumModel, "rowsum.yaml");
  CheckReport r = run_check(m, options_for(m, [](std::vector<at::Tensor>&, const std::vector<at::Tensor>& in, int) {
                              in[0].mul_(2);
                            }));
  ASSERT_FALSE(r.pass());
  const OutputCheck& o = r.backends[0].failures.at(0).outputs.at(0);
  EXPECT_EQ(o.kind, OutputCheck::Kind::State);
  EXPECT_EQ(o.oracle, "state");
  EXPECT_EQ(output_check_to_json(o)["kind"], "state");
  std::ostringstream text;
  print_terminal_report(r, text, {});
  EXPECT_NE(text.str().find("input x after the run [state]"), std::string::npos) << text.str();
}

TEST(RunnerTest, BatchNormRunningStatsMustMatchEager) {
  Model m = load_model_text(R"(format: gbcheck/v1
name: bn
dims: {N: [2, 4]}
inputs:
  x: {shape: [N, 3, 4, 4], dtype: float32}
params:
  w: {shape: [3], dtype: float32}
  b: {shape: [3], dtype: float32}
  rm: {shape: [3], dtype: float32, values: {dist: const, value: 0.0}}
  rv: {shape: [3], dtype: float32, values: {dist: const, value: 1.0}}
graph:
  - {id: y, op: batch_norm, args: [x, w, b, rm, rv], training: true}
outputs: [y]
check:
  cases: 3
)",
                            "bn.yaml");
  EXPECT_TRUE(run_check(m, options_for(m, nullptr)).pass());
  CheckReport r = run_check(m, options_for(m, [](std::vector<at::Tensor>&, const std::vector<at::Tensor>& in, int) {
                              in[3].add_(1e-3);  // running_mean updated wrongly
                            }));
  ASSERT_FALSE(r.pass());
  const OutputCheck& o = r.backends[0].failures.at(0).outputs.at(0);
  EXPECT_EQ(o.output, "rm");
  EXPECT_EQ(o.kind, OutputCheck::Kind::State);
}

// Found by the fuzzer (`gbc divergence dropout [dropout]`, seed 8000043): an eval-mode dropout of a
// running mean that a training batch_norm updated first reads a computed value, which gbc rounds
// an ulp apart from eager; the outputs' oracles judge it. The eval-mode dropout of an input no node
// writes must still be exact.
TEST(RunnerTest, EvalDropoutOfAWrittenInputIsJudgedAsAComputedValue) {
  Model m = load_model_text(R"(format: gbcheck/v1
name: bn_drop
inputs:
  x: {shape: [4, 3], dtype: float32}
params:
  w: {shape: [3], dtype: float32}
  b: {shape: [3], dtype: float32}
  rm: {shape: [3], dtype: float32}
  rv: {shape: [3], dtype: float32, values: {dist: const, value: 1.0}}
  u: {shape: [3], dtype: float32}
graph:
  - {id: y, op: batch_norm, args: [x, w, b, rm, rv], training: true}
  - {id: d, op: dropout, args: [rm], training: false}
  - {id: e, op: dropout, args: [u], training: false}
outputs: [y, d, e]
check:
  cases: 2
)",
                            "bn_drop.yaml");
  auto ulp_off = [](size_t k) -> Fault {
    return [k](std::vector<at::Tensor>& out, const std::vector<at::Tensor>&, int) {
      out[k] = at::nextafter(out[k].clone(), at::full_like(out[k], 1e30));
    };
  };
  EXPECT_TRUE(run_check(m, options_for(m, ulp_off(1))).pass());
  CheckReport exact = run_check(m, options_for(m, ulp_off(2)));
  ASSERT_FALSE(exact.pass());
  EXPECT_EQ(exact.backends[0].failures.at(0).outputs.at(0).oracle, "dropout");
}

// Found by the fuzzer (seed 8100868): `to(x, float64)` is a copy for the float32 variant of x and x
// itself for the float64 one, where add_ through it writes x. The state oracle's "the model never
// writes x" held for the first variant only: a path that wrote x as eager did failed.
TEST(RunnerTest, AnInputWrittenInOneDtypeVariantIsWritableInEvery) {
  Model m = load_model_text(R"(format: gbcheck/v1
name: variant_alias
inputs:
  x: {shape: [2, 3], dtype: float32, dtypes: [float32, float64]}
graph:
  - {id: w, op: to, args: [x], dtype: float64}
  - {id: v, op: slice, args: [w], dim: 1, start: 0, end: 2}
  - {op: add_, args: [v, 1.0]}
  - {id: m, op: amin, args: [x]}
outputs: [m]
check:
  cases: 4
)",
                            "variant_alias.yaml");
  EXPECT_TRUE(run_check(m, options_for(m, nullptr)).pass());
}

// The float64 reference is made from the model's graph in the dtype variant a case's inputs have:
// the bfloat16 variant's graph rounds a layer_norm to bfloat16, which a float32 case never did
// (seed 8401002: gt(mean(layer_norm(x)), i) failed on a float32 case of a bfloat16 model).
TEST(RunnerTest, TheReferenceIsTypedAsTheCasesDtypeVariant) {
  Model m = load_model_text(R"(format: gbcheck/v1
name: variants
inputs:
  x: {shape: [3, 3], dtype: bfloat16, dtypes: [bfloat16, float32]}
  i: {shape: [1, 1], dtype: int64}
graph:
  - {id: n, op: layer_norm, args: [x], normalized_shape: [3]}
outputs: [n]
)",
                            "variants.yaml");
  Graph f32;
  Diagnostics diags;
  ASSERT_TRUE(m.graph_for_variant(1, f32, diags)) << diags.str();
  const std::vector<const Graph*> variants = {&m.graph, &f32};
  const at::Tensor i = at::zeros({1, 1}, at::kLong);
  EXPECT_EQ(matching_dtype_variant(variants, {at::zeros({3, 3}, at::kBFloat16), i}), 0);
  EXPECT_EQ(matching_dtype_variant(variants, {at::zeros({3, 3}, at::kFloat), i}), 1);
  EXPECT_EQ(matching_dtype_variant(variants, {at::zeros({3, 3}, at::kDouble), i}), 0) << "none matches: as loaded";
}

// A float output is judged with the tolerance of the least precise float its computation stores
// (seed 8802227: a float64 baddbmm of a float32 silu's value, 1 float32 ulp apart in gbc and
// eager, against float64's atol 1e-7); graph inputs are data and loosen nothing.
TEST(RunnerTest, AnOutputIsAsPreciseAsTheFloatsItIsComputedThrough) {
  Model m = load_model_text(R"(format: gbcheck/v1
name: provenance
inputs:
  x: {shape: [3], dtype: float32, dtypes: [float32, float64]}
  d: {shape: [3], dtype: float64}
graph:
  - {id: s, op: silu, args: [x]}
  - {id: w, op: to, args: [s], dtype: float64}
  - {id: y, op: mul, args: [w, d]}
  - {id: z, op: mul, args: [d, 2.0]}
  - {id: c, op: mul, args: [x, d]}
outputs: [y, z, c]
)",
                            "provenance.yaml");
  const JudgePlan plan = make_judge_plan(m);
  const Tolerance f32 = m.check.dtype_tolerance(DType::Float32), f64 = m.check.dtype_tolerance(DType::Float64);
  EXPECT_EQ(plan.output_tol[0].atol, f32.atol) << "y goes through float32 values";
  EXPECT_EQ(plan.output_tol[0].rtol, f32.rtol);
  EXPECT_EQ(plan.output_tol[1].atol, f64.atol) << "z is float64 throughout";
  EXPECT_EQ(plan.output_tol[2].atol, f64.atol) << "c reads a float32 input, computes in float64";
  // Looked up by the output's dtype, float64 in both variants: the looser of the two applies.
  EXPECT_EQ(plan.output_tolerance(0, DType::Float64).atol, f32.atol);
}

TEST(RunnerTest, DropoutWithAnotherMaskPassesAWrongScaleFails) {
  Model m = load_model_text(R"(format: gbcheck/v1
name: drop
inputs:
  x: {shape: [64, 64], dtype: float32}
graph:
  - {id: y, op: dropout, args: [x], p: 0.25, training: true}
outputs: [y]
check:
  cases: 3
)",
                            "drop.yaml");
  // Reseeding gives another mask: not bit-identical to eager, statistically right.
  Fault other_mask = [](std::vector<at::Tensor>& out, const std::vector<at::Tensor>& in, int) {
    at::manual_seed(987654321);
    out[0] = at::dropout(in[0], 0.25, true);
  };
  CheckReport ok = run_check(m, options_for(m, other_mask));
  EXPECT_TRUE(ok.pass());
  Fault unscaled = [](std::vector<at::Tensor>& out, const std::vector<at::Tensor>& in, int) {
    out[0] = in[0] * out[0].ne(0);
  };
  CheckReport bad = run_check(m, options_for(m, unscaled));
  ASSERT_FALSE(bad.pass());
  EXPECT_EQ(bad.backends[0].failures.at(0).outputs.at(0).oracle, "dropout");
}

// Found by the fuzzer (`gbc divergence dropout [dropout,silu,to]`): the dropout's argument is a
// bfloat16 silu, which eager rounds at every step and gbc once; the kept values then differ from
// eager's x / (1 - p) by a bfloat16 ulp. The float64 reference's argument settles it: the path's
// values are the more accurate ones, so the check passes.
TEST(RunnerTest, DropoutOfARoundedArgumentIsJudgedAgainstTheFloat64Reference) {
  Model m = load_model_text(R"(format: gbcheck/v1
name: drop_silu
inputs:
  x: {shape: [32, 64], dtype: bfloat16}
graph:
  - {id: s, op: silu, args: [x]}
  - {id: d, op: to, args: [s], dtype: float64}
  - {id: y, op: dropout, args: [d], p: 0.25, training: true}
outputs: [y]
check:
  cases: 2
)",
                            "drop_silu.yaml");
  Fault rounded_once = [](std::vector<at::Tensor>& out, const std::vector<at::Tensor>& in, int) {
    at::Tensor d = at::silu(in[0].to(at::kFloat)).to(at::kBFloat16).to(at::kDouble);
    at::manual_seed(987654321);
    out[0] = at::dropout(d, 0.25, true);
  };
  CheckReport r = run_check(m, options_for(m, rounded_once));
  EXPECT_TRUE(r.pass());
  ASSERT_EQ(r.backends.size(), 1u);
  for (const CaseFailure& f : r.backends[0].failures)
    ADD_FAILURE() << "case " << f.index << ": " << (f.outputs.empty() ? f.error : f.outputs[0].detail);
}

const char* kDriftModel = R"(format: gbcheck/v1
name: drift
inputs:
  x: {shape: [16], dtype: float64}
graph:
  - {id: y, op: mul, args: [x, 1.0]}
outputs: [y]
check:
  cases: 1
  oracle: [tolerance, nan_inf, drift]
  iterations: {steps: 32, feedback: {y: x}}
)";

TEST(RunnerTest, DriftFasterThanLinearFailsWithinTolerance) {
  Model m = load_model_text(kDriftModel, "drift.yaml");
  // Each step adds 1e-10 * step: the error after s steps grows like s^2, under the tolerance.
  CheckReport r = run_check(m, options_for(m, [](std::vector<at::Tensor>& out, const std::vector<at::Tensor>&, int call) {
                              out[0] = out[0] + 1e-10 * (call + 1);
                            }));
  ASSERT_FALSE(r.pass());
  const auto& f = r.backends[0].failures.at(0);
  const OutputCheck* drift = nullptr;
  for (const auto& o : f.outputs)
    if (o.kind == OutputCheck::Kind::Drift) drift = &o;
  ASSERT_NE(drift, nullptr);
  EXPECT_NE(drift->detail.find("faster than linearly"), std::string::npos) << drift->detail;
  ASSERT_EQ(r.backends[0].drift.size(), 1u);
  EXPECT_EQ(r.backends[0].drift[0].steps.size(), 32u);
  EXPECT_LT(r.backends[0].drift[0].steps.back().ratio, 1.0);
  const std::string svg = drift_plot_svg("drift", r.backends[0].drift);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_EQ(check_report_to_json(r)["backends"][0]["drift"][0]["steps"].size(), 32u);

  const std::string dir = ::testing::TempDir() + "gbcheck-drift-plots";
  const std::vector<std::string> written = write_drift_plots(r, dir);
  ASSERT_EQ(written.size(), 1u);
  EXPECT_EQ(written[0], dir + "/drift-planted-drift.svg");
  std::ifstream file(written[0]);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(file), {}), drift_plot_svg("drift on planted: error per step, 1 case(s)", r.backends[0].drift));

  CheckReport linear = run_check(m, options_for(m, [](std::vector<at::Tensor>& out, const std::vector<at::Tensor>&, int) {
                                   out[0] = out[0] + 1e-9;
                                 }));
  EXPECT_TRUE(linear.pass());
}

TEST(RunnerTest, ARaisingBackendIsShrunkToItsSmallestRaisingCase) {
  Model m = load_model_text(kSumModel, "rowsum.yaml");
  CheckReport r = run_check(m, options_for(m, [](std::vector<at::Tensor>&, const std::vector<at::Tensor>& in, int) {
                              if (in[0].size(0) >= 2) throw std::runtime_error("planted: batch too large");
                            }));
  ASSERT_FALSE(r.pass());
  const CaseFailure& f = r.backends[0].failures.at(0);
  EXPECT_EQ(f.error, "planted: batch too large");
  ASSERT_TRUE(f.shrunk);
  EXPECT_EQ(f.shrunk->dims.at("B"), 2);
  EXPECT_EQ(f.shrunk->dims.at("D"), 1);
}

// A compiled path's own assertion (gbc's InternalError, c10's INTERNAL ASSERT), raised while
// running or while preparing, is that backend's failure of kind internal-error (exit 1), shrunk
// like any other; a fault of the harness's own (a registry entry that creates nothing) stays an
// InternalError for the command line to report as a gbcheck bug (exit 3).
TEST(RunnerTest, ACompiledPathsInternalErrorIsItsFailureNotGbchecks) {
  Model m = load_model_text(kSumModel, "rowsum.yaml");
  CheckReport r = run_check(m, options_for(m, [](std::vector<at::Tensor>&, const std::vector<at::Tensor>& in, int) {
                              if (in[0].size(1) >= 3) internal_error("planted: fusion lost a dim");
                            }));
  EXPECT_EQ(r.exit_code(), kExitDivergence);
  const CaseFailure& f = r.backends[0].failures.at(0);
  EXPECT_EQ(f.error_kind, PathErrorKind::InternalError);
  EXPECT_EQ(f.error, "planted: fusion lost a dim");
  ASSERT_TRUE(f.shrunk) << f.shrink_note;
  EXPECT_EQ(f.shrunk->dims.at("D"), 3);
  std::ostringstream text;
  print_terminal_report(r, text, {});
  EXPECT_NE(text.str().find("    internal error: planted: fusion lost a dim"), std::string::npos) << text.str();
  EXPECT_EQ(check_report_to_json(r)["backends"][0]["failures"][0]["error"]["kind"], "internal-error");

  CheckReport torch_assert = run_check(m, options_for(m, [](std::vector<at::Tensor>&, const std::vector<at::Tensor>&, int) {
                                         TORCH_INTERNAL_ASSERT(false, "planted");
                                       }));
  EXPECT_EQ(torch_assert.exit_code(), kExitDivergence);
  EXPECT_EQ(torch_assert.backends[0].failures.at(0).error_kind, PathErrorKind::InternalError);
  CheckReport raised = run_check(m, options_for(m, [](std::vector<at::Tensor>&, const std::vector<at::Tensor>&, int) {
                                   TORCH_CHECK(false, "planted: a shape the op rejects");
                                 }));
  EXPECT_EQ(raised.backends[0].failures.at(0).error_kind, PathErrorKind::Raised);
}

// Eager whose prepare() throws `E`.
template <typename E>
class UnpreparableBackend : public Backend {
 public:
  std::string name() const override { return "unpreparable"; }
  void prepare(const Graph&, const BackendOptions&) override { throw E("planted: capture broke an invariant"); }
  std::vector<at::Tensor> run(const std::vector<at::Tensor>&) override { return {}; }
  const BackendStats& stats() const override { return stats_; }

 private:
  BackendStats stats_;
};

TEST(RunnerTest, ABackendWhosePrepareThrowsFailsEveryCase) {
  Model m = load_model_text(kSumModel, "rowsum.yaml");
  RunOptions o = run_options_from_model(m);
  o.backends = {"unpreparable"};
  o.extra_backends.push_back({"unpreparable", "throws in prepare",
                              [] { return std::make_unique<UnpreparableBackend<InternalError>>(); }, true});
  CheckReport r = run_check(m, o);
  EXPECT_EQ(r.exit_code(), kExitDivergence);
  EXPECT_EQ(r.backends[0].cases_failed, 6);
  EXPECT_EQ(r.backends[0].failures.at(0).error_kind, PathErrorKind::InternalError);
  EXPECT_EQ(r.backends[0].failures.at(0).error, "planted: capture broke an invariant");

  o.extra_backends[0].create = [] { return std::make_unique<UnpreparableBackend<std::runtime_error>>(); };
  CheckReport raised = run_check(m, o);
  EXPECT_EQ(raised.exit_code(), kExitDivergence);
  EXPECT_EQ(raised.backends[0].failures.at(0).error_kind, PathErrorKind::Raised);

  o.extra_backends[0].create = [] { return std::unique_ptr<Backend>(); };
  EXPECT_THROW(run_check(m, o), InternalError);
}

TEST(RunnerTest, InvalidOracleNamesAreModelErrors) {
  std::string text = kSumModel;
  text += "  oracle: [tolerance, fp46]\n";
  Model m = load_model_text(text, "rowsum.yaml");
  EXPECT_THROW(run_check(m, options_for(m, nullptr)), ModelError);
}

TEST(RunnerTest, PerOutputToleranceOverridesTheDtypes) {
  std::string text = kSumModel;
  text += "  oracle: [tolerance, nan_inf]\n";
  Fault off = [](std::vector<at::Tensor>& out, const std::vector<at::Tensor>&, int) { out[0] = out[0] + 1e-3; };
  Model strict = load_model_text(text, "rowsum.yaml");
  CheckReport r = run_check(strict, options_for(strict, off));
  ASSERT_FALSE(r.pass());
  const OutputCheck& o = r.backends[0].failures.at(0).outputs.at(0);
  EXPECT_EQ(o.oracle, "tolerance");
  EXPECT_NE(o.min_passing.find("atol 0.001"), std::string::npos) << o.min_passing;
  Model loose =
      load_model_text(text + "  tolerance: {float32: {rtol: 0, atol: 1e-9}, y: {rtol: 0, atol: 0.002}}\n", "rowsum.yaml");
  EXPECT_TRUE(run_check(loose, options_for(loose, off)).pass());
}

// check.error_stat: one element far off fails elementwise but not the median.
TEST(RunnerTest, ErrorStatIsSelectable) {
  const std::string text = R"(format: gbcheck/v1
name: scale
dims: {B: [2, 4], D: [4, 16]}
inputs:
  x: {shape: [B, D], dtype: float32}
graph:
  - {id: y, op: mul, args: [x, 2.0]}
outputs: [y]
check:
  cases: 4
  oracle: [tolerance, nan_inf]
)";
  Fault one_off = [](std::vector<at::Tensor>& out, const std::vector<at::Tensor>&, int) { out[0][0][0] += 1.0; };
  Model elementwise = load_model_text(text, "scale.yaml");
  CheckReport r = run_check(elementwise, options_for(elementwise, one_off));
  EXPECT_FALSE(r.pass());
  EXPECT_EQ(r.error_stat, "elementwise");
  Model median = load_model_text(text + "  error_stat: quantile\n  quantile: 0.5\n", "scale.yaml");
  CheckReport m = run_check(median, options_for(median, one_off));
  EXPECT_TRUE(m.pass());
  EXPECT_EQ(m.error_stat, "quantile 0.5");
}

// check.oracle: without fp64, a reordered sum under a zero tolerance is a failure; with it, rounding.
TEST(RunnerTest, OracleSelectionDecidesWhoJudges) {
  const std::string text = std::string(kSumModel) + "  tolerance: {float32: {rtol: 0, atol: 0}}\n";
  Fault reordered = [](std::vector<at::Tensor>& out, const std::vector<at::Tensor>& in, int) {
    out[0] = in[0].flip(1).sum(1);
  };
  Model all = load_model_text(text, "rowsum.yaml");
  EXPECT_TRUE(run_check(all, options_for(all, reordered)).pass());
  Model tolerance_only = load_model_text(text + "  oracle: [tolerance]\n", "rowsum.yaml");
  CheckReport r = run_check(tolerance_only, options_for(tolerance_only, reordered));
  EXPECT_EQ(r.oracles, std::vector<std::string>{"tolerance"});
  ASSERT_FALSE(r.pass());
  EXPECT_EQ(r.backends[0].failures.at(0).failed_oracles(), std::vector<std::string>{"tolerance"});
}

// Eager and the compiled path start each run from the same RNG seed: the same dropout mask.
TEST(RunnerTest, RandomOpsAreReseededIdentically) {
  const char* text = R"(format: gbcheck/v1
name: drop
inputs:
  x: {shape: [32, 32], dtype: float32}
graph:
  - {id: y, op: dropout, args: [x], p: 0.5, training: true}
  - {id: s, op: sum, args: [y]}
outputs: [y, s]
check:
  cases: 3
  oracle: [tolerance, nan_inf, determinism]
)";
  Model m = load_model_text(text, "drop.yaml");
  CheckReport same = run_check(m, options_for(m, nullptr));
  EXPECT_TRUE(same.pass());
  EXPECT_TRUE(same.backends[0].notes.empty()) << same.backends[0].notes.at(0);
  // A path that draws from another seed cannot be compared element by element, and says so.
  CheckReport other = run_check(m, options_for(m, [](std::vector<at::Tensor>& out, const std::vector<at::Tensor>& in, int) {
                                  at::manual_seed(42);
                                  out[0] = at::dropout(in[0], 0.5, true);
                                  out[1] = out[0].sum();
                                }));
  ASSERT_FALSE(other.backends[0].notes.empty());
  EXPECT_NE(other.backends[0].notes[0].find("mask"), std::string::npos) << other.backends[0].notes[0];
}

TEST(RunnerTest, EagerThatDisagreesWithItselfIsAnUnusableReference) {
  Model m = load_model_text(kSumModel, "rowsum.yaml");
  const JudgePlan plan = make_judge_plan(m);
  const std::vector<at::Tensor> in = {at::ones({2, 3})};
  const std::vector<at::Tensor> a = {at::tensor({1.0f, 2.0f})}, b = {at::tensor({1.0f, 2.5f})};
  EXPECT_EQ(reference_disagreement(plan, {a, in}, {a, in}, 0), "");
  const std::string why = reference_disagreement(plan, {a, in}, {b, in}, 0);
  EXPECT_NE(why.find("eager disagrees with itself on output y"), std::string::npos) << why;
  EXPECT_NE(why.find("[1]"), std::string::npos) << why;

  CheckReport r;
  r.model_name = "rowsum";
  r.backends.emplace_back();
  r.backends[0].backend = "gbc";
  r.unusable.push_back({3, 77, why});
  EXPECT_TRUE(r.no_usable_case());
  EXPECT_EQ(r.exit_code(), kExitInvalid);
  std::ostringstream text;
  print_terminal_report(r, text, {});
  EXPECT_NE(text.str().find("unusable reference"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("case 3 (seed 77)"), std::string::npos) << text.str();
  r.cases_judged = 1;  // with a usable case, the unusable ones are reported but do not fail the check
  EXPECT_TRUE(r.pass());
  EXPECT_EQ(check_report_to_json(r)["unusable_cases"][0]["case"], 3);
}

// --reference: the backends are judged against another backend, which the report, the JSON and
// the replay lines name; its failures are the reference's (exit 1), its nondeterminism makes the
// case unusable under its own name.
TEST(RunnerTest, AnotherBackendCanBeTheReference) {
  Model m = load_model_text(kSumModel, "rowsum.yaml");
  RunOptions opt = options_for(m, nullptr);  // "planted": eager's values exactly
  auto add = [&](const std::string& name, Fault fault) {
    opt.extra_backends.push_back({name, "a planted reference", [fault] { return std::make_unique<PlantedBackend>(fault); }, true});
  };
  auto offset_by = [](double d) {
    return [d](std::vector<at::Tensor>& out, const std::vector<at::Tensor>&, int) { out[0] = out[0] + d; };
  };
  add("offset", offset_by(0.5));
  add("offset-nan", [](std::vector<at::Tensor>& out, const std::vector<at::Tensor>&, int) {  // offset's values, one NaN
    out[0] = out[0] + 0.5;
    out[0][0] = NAN;
  });
  add("raises", [](std::vector<at::Tensor>&, const std::vector<at::Tensor>&, int) { throw std::runtime_error("no kernel for sum"); });
  add("flaky", [](std::vector<at::Tensor>& out, const std::vector<at::Tensor>&, int call) { out[0] = out[0] + call; });
  opt.max_shrink_tries = 0;

  // The same wrong values as the reference's: a pass, where against eager it fails.
  opt.backends = {"offset"};
  EXPECT_FALSE(run_check(m, opt).pass());
  opt.reference = "offset";
  CheckReport same = run_check(m, opt);
  EXPECT_TRUE(same.pass());
  EXPECT_EQ(same.backends[0].worst_abs, 0.0);

  // Both wrong, differently: a divergence, replayed with the reference.
  opt.backends = {"offset-nan"};
  CheckReport r = run_check(m, opt);
  EXPECT_EQ(r.reference, "offset");
  ASSERT_FALSE(r.pass());
  EXPECT_EQ(r.exit_code(), kExitDivergence);
  EXPECT_EQ(r.backends[0].cases_failed, 6);
  EXPECT_EQ(r.backends[0].failures.at(0).outputs.at(0).oracle, "nan_inf");
  const CaseFailure& f = r.backends[0].failures.at(0);
  EXPECT_NE(r.replay_command("offset-nan", f.index, "").find(" --backend offset-nan --reference offset --seed "), std::string::npos);
  std::ostringstream text;
  print_terminal_report(r, text, {});
  EXPECT_NE(text.str().find("| cpu | reference offset | seed"), std::string::npos) << text.str();
  EXPECT_EQ(check_report_to_json(r)["reference"], "offset");
  EXPECT_EQ(check_report_to_json(run_check(m, options_for(m, nullptr)))["reference"], "eager");

  // Eager's exact values against the wrong reference: the float64 reference sides with the path,
  // which passes, and the report says the reference erred.
  opt.backends = {"planted"};
  CheckReport right = run_check(m, opt);
  EXPECT_TRUE(right.pass());
  ASSERT_FALSE(right.backends[0].notes.empty());
  EXPECT_EQ(right.backends[0].notes[0],
            "output y: where this path and the reference offset differ, the float64 reference agrees with this path (offset's own error)");

  opt.reference = "raises";
  CheckReport raised = run_check(m, opt);
  EXPECT_EQ(raised.eager_error, "no kernel for sum");
  EXPECT_EQ(raised.exit_code(), kExitDivergence);  // a compiler failed, not the model
  std::ostringstream raised_text;
  print_terminal_report(raised, raised_text, {});
  EXPECT_NE(raised_text.str().find("error: the raises reference failed on case 0: no kernel for sum"), std::string::npos)
      << raised_text.str();

  opt.reference = "flaky";
  CheckReport flaky = run_check(m, opt);
  EXPECT_TRUE(flaky.no_usable_case());
  ASSERT_FALSE(flaky.unusable.empty());
  EXPECT_NE(flaky.unusable[0].reason.find("flaky disagrees with itself on output y"), std::string::npos)
      << flaky.unusable[0].reason;
}

// Built-in backends against each other: gbc's interpreter against its compiled kernels.
TEST(RunnerTest, BuiltInBackendsCompareWithEachOther) {
  Model m = load_model_text(kSumModel, "rowsum.yaml");
  RunOptions opt = run_options_from_model(m);
  opt.backends = {"gbc-interp"};
  opt.reference = "gbc";
  CheckReport r = run_check(m, opt);
  EXPECT_TRUE(r.pass()) << r.backends[0].failures.size();
  EXPECT_EQ(r.reference, "gbc");
  EXPECT_EQ(r.cases_judged, 6);
}

// x - (-0.0) is x except at x = -0.0, where it is +0.0: a backend that runs the sub as an add (the
// simplification x - (-0.0) -> x) differs from eager only in the sign of zeros. IEEE pins that
// sign here, so the signed_zero oracle fails it; gbc computes it right.
const char* kSignedZeroModel = R"(format: gbcheck/v1
name: signed_zero
dims: {N: [1, 16]}
inputs:
  x: {shape: [N], dtype: float32}
graph:
  - {id: y, op: sub, args: [x, -0.0]}
outputs: [y]
check:
  cases: 8
  special_values: 0.5
)";

TEST(RunnerTest, AZeroOfTheWrongSignFailsTheSignedZeroOracle) {
  Model m = load_model_text(kSignedZeroModel, "signed_zero.yaml");
  RunOptions planted = run_options_from_model(m);
  planted.backends = {"planted"};
  planted.extra_backends.push_back({"planted", "sub run as add",
                                    [] { return std::make_unique<testing::MiscompilingBackend>("sub", "add"); }, true});
  CheckReport r = run_check(m, planted);
  ASSERT_FALSE(r.pass());
  const OutputCheck& o = r.backends[0].failures.at(0).outputs.at(0);
  EXPECT_EQ(o.oracle, "signed_zero");
  EXPECT_NE(o.detail.find("(expected 0, got -0)"), std::string::npos) << o.detail;

  RunOptions gbc = run_options_from_model(m);
  gbc.backends = {"gbc"};
  CheckReport g = run_check(m, gbc);
  EXPECT_TRUE(g.pass()) << (g.pass() ? "" : g.backends[0].failures.at(0).outputs.at(0).detail);
}

// Every zero's sign flipped: caught on the sub, not judged on an amax of zeros (IEEE leaves the
// sign of max(-0.0, +0.0) to the implementation).
TEST(RunnerTest, TheSignOfZerosIsJudgedOnlyWhereIeeePinsIt) {
  Fault flip_zeros = [](std::vector<at::Tensor>& out, const std::vector<at::Tensor>&, int) {
    out[0] = at::where(out[0].eq(0), out[0].neg(), out[0]);
  };
  Model sub = load_model_text(kSignedZeroModel, "signed_zero.yaml");
  CheckReport r = run_check(sub, options_for(sub, flip_zeros));
  ASSERT_FALSE(r.pass());
  EXPECT_EQ(r.backends[0].failures.at(0).outputs.at(0).oracle, "signed_zero");
  std::string zeros = kSumModel;
  zeros.replace(zeros.find("  - {id: y, op: sum, args: [x], dim: 1}"), 39,
                "  - {id: z, op: mul, args: [x, 0.0]}\n  - {id: y, op: amax, args: [z], dim: 1}");
  Model amax = load_model_text(zeros, "zeros.yaml");
  EXPECT_TRUE(run_check(amax, options_for(amax, flip_zeros)).pass());
}

}  // namespace
}  // namespace gbc
