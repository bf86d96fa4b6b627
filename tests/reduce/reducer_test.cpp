// Tests of the reducer (harness/reduce/reducer.h) against planted bugs (planted_backends.h): a
// 200-node graph with one miscompiled op reduces to at most 3 nodes (the time is printed, not
// asserted), a crash keeps its crash signature, the values that matter survive value
// simplification, dims shrink, a flaky check is reported as nondeterministic, a passing model is
// not reduced, and the written folder loads back; the shipped schedule (configs/reduce.yaml) takes
// the steps the reducer took before it was data, and another schedule is followed; candidates are
// judged against --reference's backend when one is given. Also the sandboxed check that the fuzzer
// calls. A failure that only an expanded input reaches keeps that input's layout through the
// reduction (the other inputs' views are dropped) and in inputs.json, whose replay still fails.
#include "harness/reduce/reducer.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/inputs/input_generator.h"
#include "harness/inputs/user_inputs.h"
#include "harness/model/model_loader.h"
#include "harness/reduce/sandboxed_check.h"
#include "tests/reduce/planted_backends.h"
#include "tests/support/single_threaded.h"
#include "tests/support/temp_dir.h"
#include "compiler/support/file_tree.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

BackendInfo planted(const std::string& name, std::function<std::unique_ptr<Backend>()> make) {
  return BackendInfo{name, "a backend with a planted bug (test only)", std::move(make), true};
}

BackendInfo miscompiling(const std::string& from, const std::string& to) {
  return planted("planted", [from, to] { return std::make_unique<testing::MiscompilingBackend>(from, to); });
}

// A chain of `n` nodes over x[B, 16]: elementwise ops (one of them `bug_op` at `bug_at`), then a
// sum over dim 1 at 90% of the way and elementwise ops on the [B] result, so that removing the
// tail needs more than bypassing nodes.
std::string chain_model(int n, int bug_at, const std::string& bug_op, const std::string& backend) {
  std::ostringstream m;
  m << "format: gbcheck/v1\nname: chain\ndims: {B: [1, 8]}\ninputs:\n  x: {shape: [B, 16], dtype: float32}\n"
    << "params:\n  w: {shape: [16], dtype: float32}\ngraph:\n";
  const int sum_at = n * 9 / 10;
  const char* cycle[] = {"sin", "add_w", "mul", "cos", "neg", "abs", "add"};
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    std::string id = "v" + std::to_string(i);
    std::string op = i == bug_at ? bug_op : cycle[i % 7];
    m << "  - {id: " << id << ", ";
    if (i == sum_at) m << "op: sum, args: [" << prev << "], dim: 1}\n";
    else if (op == "add_w" && i < sum_at) m << "op: add, args: [" << prev << ", w]}\n";
    else if (op == "add_w") m << "op: add, args: [" << prev << ", 0.5]}\n";
    else if (op == "mul") m << "op: mul, args: [" << prev << ", 0.75]}\n";
    else if (op == "add") m << "op: add, args: [" << prev << ", 0.25]}\n";
    else m << "op: " << op << ", args: [" << prev << "]}\n";
    prev = id;
  }
  m << "outputs: [" << prev << "]\ncheck: {cases: 3, backends: [" << backend << "]}\n";
  return m.str();
}

ReduceOptions options_with(const BackendInfo& backend) {
  ReduceOptions o;
  o.backend = backend.name;
  o.extra_backends = {backend};
  o.limits.timeout_s = 30;
  return o;
}

std::vector<std::string> ops_of(const Model& m) {
  std::vector<std::string> ops;
  for_each_node(m.graph.body, [&](const Node& n) { ops.push_back(op_name(n.op)); });
  return ops;
}

TEST(Reducer, ReducesA200NodeChainToTheMiscompiledNode) {
  Model model = load_model_text(chain_model(200, 120, "tanh", "planted"), "chain200.yaml");
  ASSERT_EQ(model.graph.node_count(), 200u);
  ReduceOptions o = options_with(miscompiling("tanh", "sigmoid"));
  ReduceResult r = reduce_model(model, o);
  ASSERT_EQ(r.status, ReduceResult::Status::Reduced) << r.note;
  std::printf("[ measure  ] 200-node chain: %d -> %d nodes, %d candidates, %d checks, %.2f s\n", r.nodes_before,
              r.nodes_after, r.candidates, r.checks, r.elapsed_s);
  EXPECT_EQ(r.nodes_before, 200);
  EXPECT_LE(r.nodes_after, 3);
  std::vector<std::string> ops = ops_of(r.model);
  EXPECT_NE(std::find(ops.begin(), ops.end(), "tanh"), ops.end());
  EXPECT_EQ(r.signature.kind, FailureSignature::Kind::Divergence);
  EXPECT_TRUE(r.signature.same_failure(r.original));
  EXPECT_NE(std::find(r.signature.ops.begin(), r.signature.ops.end(), "tanh"), r.signature.ops.end());
  EXPECT_GT(r.accepted, 0);
  EXPECT_EQ(r.inputs.size(), r.model.all_tensor_specs().size());
}

// The schedule moved from code into configs/reduce.yaml without changing a step: these counts
// were taken from the code before the move (the reduced models are asserted elsewhere).
TEST(Reducer, TheShippedScheduleTakesThePinnedSteps) {
  const std::string relu =
      "format: gbcheck/v1\ndims: {B: [1, 8]}\ninputs:\n  x: {shape: [B, 16], dtype: float64}\n"
      "graph:\n  - {id: a, op: mul, args: [x, 2.0]}\n  - {id: r, op: relu, args: [a]}\n"
      "  - {id: y, op: add, args: [r, 1.0]}\noutputs: [y]\ncheck: {cases: 2}\n";
  ReduceResult r = reduce_model(load_model_text(relu, "relu.yaml"), options_with(miscompiling("relu", "abs")));
  EXPECT_EQ(std::vector<int>({r.candidates, r.checks, r.accepted}), std::vector<int>({21, 29, 10}));
  ReduceResult c = reduce_model(load_model_text(chain_model(30, 12, "tanh", "planted"), "chain30.yaml"),
                                options_with(miscompiling("tanh", "sigmoid")));
  EXPECT_EQ(std::vector<int>({c.candidates, c.checks, c.accepted}), std::vector<int>({51, 56, 17}));
  EXPECT_EQ(ops_of(c.model), std::vector<std::string>{"tanh"});
}

// A schedule without the node passes keeps every node; the passes it names still run.
TEST(Reducer, FollowsTheScheduleOfItsConfig) {
  Model model = load_model_text(chain_model(30, 12, "tanh", "planted"), "chain30.yaml");
  ReduceOptions o = options_with(miscompiling("tanh", "sigmoid"));
  o.config = load_reduce_config();
  o.config->schedule = {"shrink_dims"};
  ReduceResult r = reduce_model(model, o);
  ASSERT_EQ(r.status, ReduceResult::Status::Reduced) << r.note;
  EXPECT_EQ(r.nodes_after, 30);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_LT(r.inputs[0].tensor.size(1), 16) << "shrink_dims did not halve the literal size 16";
  o.config->schedule = {"remove_nodes"};
  EXPECT_LT(reduce_model(model, o).nodes_after, 30);
  o.config->schedule = {"remove_nodez"};
  EXPECT_THROW(reduce_model(model, o), ConfigError);
}

TEST(Reducer, KeepsACrashSignatureWhileReducing) {
  Model model = load_model_text(chain_model(40, 25, "exp", "crashing"), "chain40.yaml");
  BackendInfo crashing = planted("crashing", [] { return std::make_unique<testing::CrashingBackend>("exp"); });
  ReduceResult r = reduce_model(model, options_with(crashing));
  ASSERT_EQ(r.status, ReduceResult::Status::Reduced) << r.note;
  EXPECT_EQ(r.original.kind, FailureSignature::Kind::Crash);
  EXPECT_EQ(r.signature.kind, FailureSignature::Kind::Crash);
  EXPECT_EQ(r.signature.detail, "SIGSEGV");
  EXPECT_LE(r.nodes_after, 3);
  std::vector<std::string> ops = ops_of(r.model);
  EXPECT_NE(std::find(ops.begin(), ops.end(), "exp"), ops.end());
}

// relu miscompiled as abs differs only on negative elements: value simplification must keep a
// negative one and may zero the rest; dims shrink while it still fails.
TEST(Reducer, KeepsTheElementsThatMatterAndShrinksDims) {
  const std::string text =
      "format: gbcheck/v1\ndims: {B: [1, 8]}\ninputs:\n  x: {shape: [B, 16], dtype: float64}\n"
      "graph:\n  - {id: a, op: mul, args: [x, 2.0]}\n  - {id: r, op: relu, args: [a]}\n"
      "  - {id: y, op: add, args: [r, 1.0]}\noutputs: [y]\ncheck: {cases: 2}\n";
  Model model = load_model_text(text, "relu.yaml");
  ReduceResult r = reduce_model(model, options_with(miscompiling("relu", "abs")));
  ASSERT_EQ(r.status, ReduceResult::Status::Reduced) << r.note;
  ASSERT_EQ(r.inputs.size(), 1u);
  const at::Tensor t = r.inputs[0].tensor;
  EXPECT_LT(t.numel(), 8 * 16) << "dims were not shrunk";
  EXPECT_TRUE(t.lt(0).any().item<bool>()) << "the negative element that shows the bug was lost";
  EXPECT_EQ(r.model.inputs[0].dtype, DType::Float32) << "the dtype was not simplified";
  EXPECT_LE(r.nodes_after, 2);
  // The graph input is the real failing tensor: checking the reduced model on it fails alike.
  CaseCheck check;
  BackendInfo info = miscompiling("relu", "abs");
  check.backend = &info;
  CaseOutcome again = check_case_sandboxed(r.model, {t}, check);
  ASSERT_TRUE(again.failed()) << again.description;
  EXPECT_TRUE(again.signature.same_failure(r.original));
}

TEST(Reducer, ReportsAFlakyCheckAsNondeterministic) {
  const fs::path counter = fs::temp_directory_path() / ("gbcheck_flaky_" + std::to_string(::getpid()));
  fs::remove(counter);
  Model model = load_model_text(chain_model(10, 4, "tanh", "flaky"), "flaky.yaml");
  BackendInfo flaky = planted("flaky", [counter] { return std::make_unique<testing::FlakyBackend>(counter.string()); });
  ReduceResult r = reduce_model(model, options_with(flaky));
  fs::remove(counter);
  EXPECT_EQ(r.status, ReduceResult::Status::Nondeterministic);
  EXPECT_NE(r.note.find("nondeterministic"), std::string::npos) << r.note;
}

TEST(Reducer, DoesNotReduceAPassingModel) {
  Model model = load_model_text(chain_model(10, 4, "tanh", "planted"), "pass.yaml");
  ReduceResult r = reduce_model(model, options_with(miscompiling("exp", "sin")));  // no exp in the model
  EXPECT_EQ(r.status, ReduceResult::Status::NotFailing);
  EXPECT_EQ(r.checks, 3);  // each case once
}

// --max-checks counts every check, the replay of the written model included (it once ran one more);
// a budget too small to confirm the failing case ends the reduction without an error.
TEST(Reducer, NeverRunsMoreChecksThanItsBudget) {
  Model model = load_model_text(chain_model(30, 12, "tanh", "planted"), "budget.yaml");
  for (int budget : {1, 2, 5, 12}) {
    ReduceOptions o = options_with(miscompiling("tanh", "sigmoid"));
    o.max_checks = budget;
    ReduceResult r = reduce_model(model, o);
    EXPECT_LE(r.checks, budget) << "--max-checks " << budget;
    EXPECT_TRUE(r.budget_exhausted) << "--max-checks " << budget;
    if (budget >= 5) EXPECT_EQ(r.status, ReduceResult::Status::Reduced) << r.note;
  }
}

// --reference: candidates are judged against another backend. One that miscompiles the same way
// leaves nothing to reduce; a correct one reduces as eager does, and the replay names it.
TEST(Reducer, ComparesWithTheReferenceItIsGiven) {
  Model model = load_model_text(chain_model(12, 5, "tanh", "planted"), "reference.yaml");
  ReduceOptions o = options_with(miscompiling("tanh", "sigmoid"));
  o.extra_backends.push_back(planted("same-bug", [] { return std::make_unique<testing::MiscompilingBackend>("tanh", "sigmoid"); }));
  o.extra_backends.push_back(planted("correct", [] { return std::make_unique<testing::MiscompilingBackend>("exp", "sin"); }));
  o.reference = "same-bug";
  EXPECT_EQ(reduce_model(model, o).status, ReduceResult::Status::NotFailing);
  o.reference = "correct";
  ReduceResult r = reduce_model(model, o);
  ASSERT_EQ(r.status, ReduceResult::Status::Reduced) << r.note;
  EXPECT_LE(r.nodes_after, 3);
  EXPECT_EQ(r.reference, "correct");
  EXPECT_NE(r.replay_command("m.yaml").find("--backend planted --reference correct --case "), std::string::npos)
      << r.replay_command("m.yaml");
  o.reference = "no-such-backend";
  EXPECT_THROW(reduce_model(model, o), ModelError);
}

TEST(Reducer, RejectsAnUnknownBackend) {
  Model model = load_model_text(chain_model(5, 2, "tanh", "planted"), "unknown.yaml");
  ReduceOptions o;
  o.backend = "no-such-backend";
  EXPECT_THROW(reduce_model(model, o), ModelError);
}

TEST(Reducer, WritesALoadableModelWithItsHeaderAndInputs) {
  Model model = load_model_text(chain_model(30, 12, "tanh", "planted"), "chain30.yaml");
  ReduceResult r = reduce_model(model, options_with(miscompiling("tanh", "sigmoid")));
  ASSERT_EQ(r.status, ReduceResult::Status::Reduced);
  const fs::path dir = fs::temp_directory_path() / ("gbcheck_reduce_out_" + std::to_string(::getpid()));
  write_reduction(r, "chain30.yaml", dir.string());
  std::ifstream f(dir / "model.yaml");
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_EQ(text.str().rfind("# Reduced by `gbcheck reduce` from chain30.yaml", 0), 0u) << text.str();
  EXPECT_NE(text.str().find("# Reproduces: planted divergence"), std::string::npos);
  Model back = load_model_file((dir / "model.yaml").string());
  EXPECT_EQ(back.graph.node_count(), static_cast<size_t>(r.nodes_after));
  nlohmann::json inputs = nlohmann::json::parse(std::ifstream(dir / "inputs.json"));
  for (const TensorSpec* s : back.all_tensor_specs()) EXPECT_TRUE(inputs.contains(s->name)) << s->name;
  nlohmann::json summary = nlohmann::json::parse(std::ifstream(dir / "summary.json"));
  EXPECT_EQ(summary["schema"], "gbcheck.reduce/v1");
  EXPECT_EQ(summary["nodes_before"], 30);
  EXPECT_EQ(summary["status"], "reduced");
  { std::error_code ignored; remove_tree(fs::path(dir).string(), ignored); }
}

TEST(Reducer, KeepsTheLayoutTheFailureNeedsAndDropsTheOthers) {
  const Model model = load_model_text(
      "format: gbcheck/v1\ninputs:\n  x: {shape: [4, 4], dtype: float32}\n  y: {shape: [4, 4], dtype: float32}\n"
      "  z: {shape: [4, 4], dtype: float32}\ngraph:\n  - {id: a, op: add, args: [x, y]}\n  - {id: b, op: mul, args: [a, z]}\n"
      "  - {id: t, op: tanh, args: [b]}\n  - {id: o, op: add, args: [t, 1.0]}\noutputs: [o]\n"
      "check: {cases: 64, layouts: any, backends: [views]}\n",
      "views.yaml");
  // A case with an expanded input and another view the failure does not need.
  const InputGenerator gen(model, c10::Device(c10::kCPU));
  std::optional<int> wanted;
  for (int k = 0; k < model.check.cases && !wanted; ++k) {
    int expanded = 0, views = 0;
    for (const at::Tensor& t : gen.make_case(k).tensors) {
      const Layout l = layout_of(t).layout;
      expanded += l == Layout::Expanded;
      views += l != Layout::Contiguous;
    }
    if (expanded >= 1 && views >= 2) wanted = k;
  }
  ASSERT_TRUE(wanted) << "no case of 64 draws an expanded input beside another view";
  ReduceOptions o = options_with(planted("views", [] { return std::make_unique<testing::ExpandedInputBackend>("tanh", "sigmoid"); }));
  o.only_case = *wanted;
  ReduceResult r = reduce_model(model, o);
  ASSERT_EQ(r.status, ReduceResult::Status::Reduced) << r.note;
  int kept = 0;
  for (const NamedTensor& in : r.inputs) {
    EXPECT_TRUE(in.layout.layout == Layout::Contiguous || in.layout.layout == Layout::Expanded) << in.name;
    kept += in.layout.layout == Layout::Expanded;
  }
  EXPECT_EQ(kept, 1);
  EXPECT_NE(kept_layouts_text(r).find(" expanded along dim "), std::string::npos) << kept_layouts_text(r);

  // The written inputs.json lays it out again, and the reduced model fails on it (`--inputs DIR`),
  // but not on the same values made contiguous.
  testing::TempDir dir("reduce-views");
  write_reduction(r, "views.yaml", dir.path("out"));
  const nlohmann::json inputs = nlohmann::json::parse(std::ifstream(dir.path("out/inputs.json")));
  int written = 0;
  for (const auto& [name, e] : inputs.items()) written += e.value("layout", "") == "expanded";
  EXPECT_EQ(written, 1) << inputs.dump();
  const nlohmann::json summary = nlohmann::json::parse(std::ifstream(dir.path("out/summary.json")));
  ASSERT_EQ(summary["kept_layouts"].size(), 1u) << summary.dump();
  EXPECT_EQ(summary["kept_layouts"][0]["layout"], "expanded");
  const Model back = load_model_file(dir.path("out/model.yaml"));
  RunOptions replay = run_options_from_model(back);
  replay.extra_backends = o.extra_backends;
  replay.backends = {"views"};
  replay.cases = 0;
  replay.given_cases = load_given_cases(back, {dir.path("out")});
  EXPECT_EQ(run_check_sandboxed(back, replay, SandboxLimits{60.0, 0}).exit_code, kExitDivergence);
  for (GivenCase& c : replay.given_cases)
    for (at::Tensor& t : c.inputs) t = t.contiguous();
  EXPECT_EQ(run_check_sandboxed(back, replay, SandboxLimits{60.0, 0}).exit_code, kExitPass);
}

TEST(SandboxedCheck, RunsAWholeCheckAndSignsItsFailures) {
  Model model = load_model_text(chain_model(12, 6, "tanh", "planted"), "chain12.yaml");
  RunOptions o = run_options_from_model(model);
  o.extra_backends = {miscompiling("tanh", "sigmoid")};
  o.max_shrink_tries = 0;
  SandboxedCheck c = run_check_sandboxed(model, o, SandboxLimits{60.0, 0});
  ASSERT_TRUE(c.sandbox.ok()) << c.sandbox.summary();
  EXPECT_EQ(c.exit_code, kExitDivergence);
  ASSERT_EQ(c.signatures.size(), 1u);
  EXPECT_EQ(c.signatures[0].backend, "planted");
  EXPECT_EQ(c.signatures[0].kind, FailureSignature::Kind::Divergence);
  EXPECT_TRUE(c.report.contains("backends"));
}

TEST(SandboxedCheck, TurnsACrashIntoASignature) {
  Model model = load_model_text(chain_model(12, 6, "exp", "crashing"), "crash12.yaml");
  RunOptions o = run_options_from_model(model);
  o.extra_backends = {planted("crashing", [] { return std::make_unique<testing::CrashingBackend>("exp"); })};
  SandboxedCheck c = run_check_sandboxed(model, o, SandboxLimits{60.0, 0});
  EXPECT_EQ(c.sandbox.status, SandboxResult::Status::Crash);
  ASSERT_EQ(c.signatures.size(), 1u);
  EXPECT_EQ(c.signatures[0].str().rfind("crashing crash SIGSEGV [", 0), 0u) << c.signatures[0].str();
}

}  // namespace
}  // namespace gbc
