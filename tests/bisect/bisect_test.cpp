// `gbcheck bisect` on injected faults whose place is known: the ladder stops at the stage that has
// the fault (gbc-interp for faults below code generation, gbc for the crash, which it survives),
// the pass search names decompose when only a decomposition creates what the fault breaks, and
// the node comparison names the model node the fault corrupts, with its file:line; and
// `check --intermediates` (check_intermediates.h) names the same node on every backend that shows
// node values, and says why for the others.
#include "harness/bisect/bisect.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "harness/bisect/bisect_report.h"
#include "harness/bisect/check_intermediates.h"
#include "harness/model/model_loader.h"
#include "tests/support/single_threaded.h"

namespace gbc {
namespace {

std::string fault_path(const std::string& kind) { return std::string(GBCHECK_SOURCE_DIR) + "/corpus/faults/" + kind + ".yaml"; }

BisectResult bisect(const Model& model, const std::string& fault) {
  BisectOptions o;
  o.run = run_options_from_model(model);
  o.run.cases = 3;
  o.run.backend_options.inject_fault = fault;
  o.backend = "gbc";
  o.timeout_s = 120;
  return run_bisect(model, o);
}

TEST(Bisect, ConstFaultIsInGbcInterpNoPassAndTheMulNode) {
  BisectResult r = bisect(load_model_file(fault_path("const")), "const");
  ASSERT_EQ(r.stage, "gbc-interp");
  ASSERT_EQ(r.ladder.size(), 3u);
  EXPECT_FALSE(r.ladder[0].result.diverged);  // trace
  EXPECT_FALSE(r.ladder[1].result.diverged);  // decomp
  ASSERT_TRUE(r.passes.has_value());
  EXPECT_EQ(r.passes->pass, "");
  EXPECT_NE(r.passes->note.find("not in a pass"), std::string::npos);
  ASSERT_TRUE(r.nodes && r.nodes->first);
  EXPECT_EQ(r.nodes->first->node, "s");
  EXPECT_EQ(r.nodes->first->op, "mul");
  EXPECT_NE(r.nodes->first->loc.str().find("const.yaml:9"), std::string::npos) << r.nodes->first->loc.str();
  EXPECT_EQ(r.nodes->first->kernel, "fused_0");
  EXPECT_NE(r.stage_command.find("--backend gbc-interp"), std::string::npos);
  EXPECT_NE(r.stage_command.find("--inject-fault const"), std::string::npos);
}

TEST(Bisect, BroadcastAndReduceBoundNameTheirNodes) {
  BisectResult b = bisect(load_model_file(fault_path("broadcast")), "broadcast");
  ASSERT_TRUE(b.nodes && b.nodes->first);
  EXPECT_EQ(b.nodes->first->node, "h");
  BisectResult r = bisect(load_model_file(fault_path("reduce-bound")), "reduce-bound");
  ASSERT_TRUE(r.nodes && r.nodes->first);
  EXPECT_EQ(r.nodes->first->node, "y");  // exp (e) is right; the sum is not
  EXPECT_EQ(r.nodes->first->op, "sum");
}

TEST(Bisect, CrashIsSurvivedAndBlamedOnGeneratedCode) {
  BisectResult r = bisect(load_model_file(fault_path("crash")), "crash");
  ASSERT_EQ(r.stage, "gbc");
  EXPECT_TRUE(r.ladder.back().result.crashed);
  EXPECT_NE(r.ladder.back().result.summary.find("SIGSEGV"), std::string::npos) << r.ladder.back().result.summary;
  EXPECT_EQ(r.passes->pass, "");  // without fusion the sigmoid kernel is generated all the same
  ASSERT_TRUE(r.nodes.has_value());
  EXPECT_FALSE(r.nodes->first.has_value());
  EXPECT_NE(r.nodes->note.find("native code"), std::string::npos);
}

TEST(Bisect, NamesDecomposeWhenOnlyTheDecompositionMeetsTheFault) {
  // Exact GELU decomposes into x * 0.5 * (1 + erf(x / sqrt 2)): numbers the const fault breaks.
  // Undecomposed, gelu is one unary op with no number, so disabling decompose removes the bug.
  Model m = load_model_text(R"(format: gbcheck/v1
name: gelu_const
dims: {N: [2, 8]}
inputs:
  x: {shape: [N, 8], dtype: float32}
graph:
  - {id: g, op: gelu, args: [x], approximate: none}
outputs: [g]
check: {cases: 3}
)", "gelu_const.yaml");
  BisectResult r = bisect(m, "const");
  ASSERT_EQ(r.stage, "gbc-interp");
  EXPECT_EQ(r.passes->pass, "decompose");
  EXPECT_NE(r.pass_command.find("--disable-pass decompose"), std::string::npos);
  ASSERT_TRUE(r.nodes && r.nodes->first);
  EXPECT_EQ(r.nodes->first->node, "g");  // the decomposition's own nodes have no eager value
}

TEST(Bisect, CleanModelDivergesNowhereAndJsonSaysSo) {
  BisectResult r = bisect(load_model_file(fault_path("const")), "");
  EXPECT_FALSE(r.diverged());
  EXPECT_EQ(r.ladder.size(), 4u);
  nlohmann::json j = bisect_result_to_json(r);
  EXPECT_EQ(j["schema"], "gbcheck.bisect/v1");
  EXPECT_TRUE(j["stage"].is_null());
  EXPECT_TRUE(j["injected_fault"].is_null());
}

TEST(Bisect, IntermediatesNameTheFirstDivergingNode) {
  const Model model = load_model_file(fault_path("const"));
  RunOptions o = run_options_from_model(model);
  o.cases = 2;
  o.backends = {"gbc-interp", "decomp", "nnc", "eager"};
  std::vector<BackendIntermediates> clean = check_intermediates(model, o);
  ASSERT_EQ(clean.size(), 4u);
  EXPECT_TRUE(clean[0].compared && clean[0].pass());
  EXPECT_EQ(clean[0].cases, 2);
  EXPECT_GT(clean[0].nodes, 0);

  o.backend_options.inject_fault = "const";
  std::vector<BackendIntermediates> r = check_intermediates(model, o);
  ASSERT_TRUE(r[0].first.has_value()) << r[0].note;
  EXPECT_EQ(r[0].first->node, "s");
  EXPECT_EQ(r[0].first->op, "mul");
  EXPECT_EQ(r[0].first_case, 0);
  EXPECT_NE(r[0].first->loc.str().find("const.yaml:9"), std::string::npos) << r[0].first->loc.str();
  EXPECT_TRUE(r[1].compared && r[1].pass());  // the fault is in kernels; decomp runs ATen
  EXPECT_FALSE(r[2].compared);
  EXPECT_EQ(r[2].note, "nnc shows only its outputs (gbc's ladder shows node values: decomp, gbc-interp, gbc; adapters may offer them)");
  EXPECT_FALSE(r[3].compared);
  std::ostringstream text;
  print_intermediates(r, text);
  EXPECT_NE(text.str().find("  gbc-interp: FAIL: first diverging node s (mul) at "), std::string::npos) << text.str();
  nlohmann::json j = intermediates_json(r);
  EXPECT_EQ(j[0]["first_divergence"]["node"], "s");
  EXPECT_EQ(j[0]["pass"], false);
  EXPECT_EQ(j[1]["pass"], true);
}

}  // namespace
}  // namespace gbc
