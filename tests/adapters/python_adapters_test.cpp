// The shipped adapters (adapters/*.py, registered in configs/backends.yaml) through the built
// gbcheck: ts-freeze and nnc-py on every model of corpus/examples and corpus/docs, one gbcheck
// process per adapter over all of them (`gbcheck check DIR...`), each model passing or failing as
// an asserted list of known failures says (with the reason; the torch.compile adapters have their
// own, tests/adapters/torch_compile_test.cpp);
// `gbcheck backends` lists them with their availability; the NNC and TorchScript bugs kept in
// corpus/found/ still reproduce; `check --intermediates` through
// the adapters' node values (revision 2 of the protocol) pins those bugs on their first diverging
// node and lists the nodes a compiler declines (harness/bisect/check_intermediates.h), and so
// does `bisect` on an adapter backend (harness/bisect/bisect.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <map>
#include <sstream>
#include <string>

#include "tests/support/run_command.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

nlohmann::json backends_json() {
  testing::CommandResult r = testing::run_gbcheck_in_source_tree("backends --json 2>/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nlohmann::json::parse(r.output, nullptr, false);
}

// "" when the backend can run here, else why not. The list is probed once per test process: each
// `gbcheck backends` starts every adapter's probe (about 2.7 s), and every case asks.
std::string unavailable(const std::string& name) {
  static const nlohmann::json probed = backends_json();
  for (const auto& b : probed)
    if (b["name"] == name) return b["available"].get<bool>() ? "" : b["reason"].get<std::string>();
  return "not listed by gbcheck backends";
}

// Whether gbcheck runs on LibTorch 1.13, where the found bugs and what freezing folds were seen.
bool on_libtorch_113() {
  return testing::run_gbcheck_in_source_tree("--version").output.find("LibTorch 1.13") != std::string::npos;
}

// The models every adapter is run on: corpus/examples, and the docs' models of corpus/docs.
std::vector<std::string> corpus_models() {
  std::vector<std::string> out;
  for (const char* folder : {"corpus/examples", "corpus/docs"})
    for (const auto& e : fs::directory_iterator(fs::path(GBCHECK_SOURCE_DIR) / folder))
      if (e.path().extension() == ".yaml") out.push_back(std::string(folder) + "/" + e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// What an adapter cannot check, with the reason: each entry is asserted (the check must still end
// with `exit_code` and print `says`), so an entry that starts passing fails here and must go.
struct KnownFailure {
  const char* model;
  const char* backend;  // "" for every backend
  int exit_code;
  const char* says;
  const char* why;
};
const std::vector<KnownFailure>& known_failures() {
  static const std::vector<KnownFailure> list = {
      {"corpus/docs/small.yaml", "", 2, "error: model has no outputs",
       "a fragment docs/model-format.md quotes: no outputs, nothing any backend could be compared on"},
      {"corpus/docs/rnn.yaml", "nnc-py", 1, "failed drift",
       "NNC's tanh differs from ATen's in the last bits, and over the 32 recurrent steps the error grows past the "
       "tolerance (the drift oracle's example model, docs/oracles.md; the built-in nnc fails it the same way)"},
      {"corpus/examples/signed_zero_identities.yaml", "ts-freeze", 1, "failed signed_zero",
       "TorchScript 1.13 gives -0.0 for x - (-0.0), x + 0.0 and 0.0 - x where IEEE 754 and eager give +0.0 "
       "(corpus/found/ts-peephole-signed-zero)"},
      {"corpus/examples/signed_zero_identities.yaml", "nnc-py", 1, "failed signed_zero",
       "the same TorchScript optimizations run before NNC (corpus/found/ts-peephole-signed-zero)"},
  };
  return list;
}

const KnownFailure* known_failure(const std::string& model, const std::string& backend) {
  for (const KnownFailure& k : known_failures())
    if (model == k.model && (std::string(k.backend).empty() || backend == k.backend)) return &k;
  return nullptr;
}

// What one `gbcheck check MODEL...` run said of each model: its section of the output (from its
// `== MODEL (i/N) ==` line to the next, stderr included) and its exit code from the summary.
struct ModelResult {
  std::string output;
  int exit_code = 0;
};

std::map<std::string, ModelResult> results_per_model(const std::string& output) {
  std::map<std::string, ModelResult> out;
  std::istringstream lines(output);
  std::string line, current;
  bool in_summary = false;
  for (; std::getline(lines, line);) {
    if (line.rfind("== ", 0) == 0 && line.size() > 6 && line.compare(line.size() - 3, 3, " ==") == 0) {
      current = line.substr(3, line.rfind(" (") - 3);
      out[current];
      continue;
    }
    if (line.rfind("summary: ", 0) == 0) in_summary = true;
    if (!in_summary) {
      if (!current.empty()) out[current].output += line + "\n";
      continue;
    }
    // "  MODEL: exit N: why", one line per model that did not pass
    const size_t exit_at = line.find(": exit ");
    if (line.rfind("  ", 0) == 0 && exit_at != std::string::npos)
      out[line.substr(2, exit_at - 2)].exit_code = std::stoi(line.substr(exit_at + 7));
  }
  return out;
}

// One gbcheck process per adapter over every corpus model (the adapter starts once for all of
// them); each model passes, or fails as its entry in known_failures() says.
class EveryCorpusModel : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryCorpusModel, PassesOrFailsAsListed) {
  const std::string& backend = GetParam();
  if (std::string why = unavailable(backend); !why.empty()) GTEST_SKIP() << backend << " cannot run here: " << why;
  testing::CommandResult r = testing::run_gbcheck_in_source_tree("check corpus/docs corpus/examples --cases 4 --backend " + backend);
  const std::map<std::string, ModelResult> results = results_per_model(r.output);
  int highest = 0;
  for (const std::string& model : corpus_models()) {
    const auto found = results.find(model);
    if (found == results.end()) {
      ADD_FAILURE() << model << " on " << backend << ": not in gbcheck's output:\n" << r.output;
      continue;
    }
    const ModelResult& result = found->second;
    if (const KnownFailure* k = known_failure(model, backend)) {
      highest = std::max(highest, k->exit_code);
      EXPECT_EQ(result.exit_code, k->exit_code) << model << " on " << backend << " is listed as failing (" << k->why
                                                << "); if it passes now, remove it from known_failures():\n" << result.output;
      EXPECT_NE(result.output.find(k->says), std::string::npos) << model << " on " << backend << ":\n" << result.output;
      continue;
    }
    EXPECT_EQ(result.exit_code, 0) << model << " on " << backend << ":\n" << result.output;
  }
  EXPECT_EQ(results.size(), corpus_models().size()) << r.output;
  EXPECT_EQ(r.exit_code, highest) << "the highest of the models' exit codes:\n" << r.output;
}

INSTANTIATE_TEST_SUITE_P(PythonAdapters, EveryCorpusModel, ::testing::Values("ts-freeze", "nnc-py"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(PythonAdapters, TheListOfKnownFailuresNamesExistingModels) {
  const std::vector<std::string> models = corpus_models();
  EXPECT_GE(models.size(), 6u);
  for (const KnownFailure& k : known_failures()) {
    EXPECT_NE(std::find(models.begin(), models.end(), k.model), models.end()) << k.model;
    EXPECT_GT(std::string(k.why).size(), 20u) << k.model << ": say why";
  }
}

TEST(PythonAdapters, BackendsListsBuiltInAndExternalBackendsWithAvailability) {
  testing::CommandResult r = testing::run_gbcheck_in_source_tree("backends");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // The table's first three columns: name, kind, availability.
  std::map<std::string, std::string> rows;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string name, kind, available;
    if (words >> name >> kind >> available && name != "why:") rows[name] = kind + " " + available;
  }
  EXPECT_EQ(rows["eager"], "reference available") << r.output;
  EXPECT_EQ(rows["gbc"], "built-in available") << r.output;
  EXPECT_EQ(rows["ts-freeze"], "adapter available") << r.output;
  EXPECT_EQ(rows["nnc-py"], "adapter available") << r.output;
  EXPECT_EQ(rows.count("inductor"), 1u) << r.output;
  nlohmann::json list = backends_json();
  ASSERT_TRUE(list.is_array()) << list;
  std::string torch_reason = unavailable("inductor");
  // Here (torch 1.13) inductor is unavailable with the probe's reason; with torch 2.x it runs.
  if (!torch_reason.empty()) {
    EXPECT_NE(torch_reason.find("needs torch >= 2.0, found "), std::string::npos) << torch_reason;
    EXPECT_NE(r.output.find("why: " + torch_reason), std::string::npos) << r.output;
  }
  // A backends file adds its backends; a bad one is reported at its location with exit code 2.
  testing::CommandResult extra = testing::run_gbcheck_in_source_tree("backends --backends-config tests/data/adapters/backends.yaml");
  EXPECT_NE(extra.output.find("eager-py"), std::string::npos) << extra.output;
  testing::CommandResult bad = testing::run_command("cd " + std::string(GBCHECK_SOURCE_DIR) + " && GBCHECK_BACKENDS_CONFIG=corpus/examples/mlp.yaml " +
                                                    testing::built_binary("gbcheck") + " backends");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("corpus/examples/mlp.yaml:"), std::string::npos) << bad.output;
}

TEST(PythonAdapters, UnavailableBackendsStopACheckWithTheReason) {
  std::string why = unavailable("inductor");
  if (why.empty()) GTEST_SKIP() << "inductor can run here";
  testing::CommandResult r = testing::run_gbcheck_in_source_tree("check corpus/examples/mlp.yaml --backend inductor");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("backend inductor cannot run here: " + why), std::string::npos) << r.output;
}

// corpus/found/nnc-masked-softmax: torch 1.13's NNC makes a fully masked softmax row NaN, through
// both NNC paths. When a torch without the bug runs this, the model passes and this test fails:
// then update the found model's README (the bug is fixed in that version) and this test.
TEST(PythonAdapters, TheFoundNncBugReproducesOnTorch113) {
  if (!on_libtorch_113()) GTEST_SKIP() << "the bug was found on torch 1.13";
  testing::CommandResult r = testing::run_gbcheck_in_source_tree("check corpus/found/nnc-masked-softmax/model.yaml --cases 2");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("  nnc-py  FAIL  0/2 cases"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  nnc     FAIL  0/2 cases"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(expected 0.125, got nan)"), std::string::npos) << r.output;
}

// corpus/found/nnc-floor-int8: torch 1.13's NNC cannot compile floor of an integer tensor (found by
// `gbcheck fuzz --backends nnc-py`). As above: when a torch without the bug passes it, update the
// README and this test.
TEST(PythonAdapters, TheFoundNncFloorBugReproducesOnTorch113) {
  if (!on_libtorch_113()) GTEST_SKIP() << "the bug was found on torch 1.13";
  if (std::string why = unavailable("nnc-py"); !why.empty()) GTEST_SKIP() << "nnc-py cannot run here: " << why;
  testing::CommandResult r = testing::run_gbcheck_in_source_tree("check corpus/found/nnc-floor-int8/model.yaml --cases 2");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("  nnc-py  FAIL  0/2 cases"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("raised: nnc-py raised in case 1: RuntimeError: Invalid integral op_type: 24"), std::string::npos)
      << r.output;
}

// corpus/found/ts-freeze-mkldnn-hardswish: torch 1.13's optimize_for_inference runs hardswish of a
// 4-channel conv's output as a wrong MKLDNN hardswish (found through an imported model's generic
// ops). As above: when a torch without the bug passes it, update the README and this test.
TEST(PythonAdapters, TheFoundTsFreezeHardswishBugReproducesOnTorch113) {
  if (!on_libtorch_113()) GTEST_SKIP() << "the bug was found on torch 1.13";
  if (std::string why = unavailable("ts-freeze"); !why.empty()) GTEST_SKIP() << "ts-freeze cannot run here: " << why;
  testing::CommandResult r = testing::run_gbcheck_in_source_tree("check corpus/found/ts-freeze-mkldnn-hardswish/model.yaml --cases 2");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("  ts-freeze  FAIL  0/2 cases"), std::string::npos) << r.output;
  testing::CommandResult plain = testing::run_command("cd " + std::string(GBCHECK_SOURCE_DIR) +
                                                      " && ${GBCHECK_PYTHON:-/usr/bin/python3} "
                                                      "corpus/found/ts-freeze-mkldnn-hardswish/ts_freeze_mkldnn_hardswish.py");
  EXPECT_EQ(plain.exit_code, 1) << plain.output;
  EXPECT_NE(plain.output.find("REPRODUCED"), std::string::npos) << plain.output;
}

// The found bugs, node by node: the NNC softmax and the MKLDNN hardswish are the first diverging
// nodes (their inputs agree); the conv whose value hardswish overwrites in place is declined.
TEST(PythonAdapters, IntermediatesThroughAdaptersNameTheFirstDivergingNode) {
  if (!on_libtorch_113()) GTEST_SKIP() << "the bugs were found on torch 1.13";
  if (std::string why = unavailable("nnc-py") + unavailable("ts-freeze"); !why.empty()) GTEST_SKIP() << why;
  testing::CommandResult nnc = testing::run_gbcheck_in_source_tree("check corpus/found/nnc-masked-softmax/model.yaml --cases 2 --backend nnc-py --intermediates");
  EXPECT_EQ(nnc.exit_code, 1) << nnc.output;
  EXPECT_NE(nnc.output.find("  nnc-py: FAIL: first diverging node probs (softmax) at corpus/found/nnc-masked-softmax/model.yaml:12:5, "
                            "case 0: 32 of 32 elements differ, first at [0, 0] (expected 0.125, got nan)\n"),
            std::string::npos)
      << nnc.output;
  testing::CommandResult ts =
      testing::run_gbcheck_in_source_tree("check corpus/found/ts-freeze-mkldnn-hardswish/model.yaml --cases 2 --backend ts-freeze --intermediates");
  EXPECT_EQ(ts.exit_code, 1) << ts.output;
  EXPECT_NE(ts.output.find("  ts-freeze: FAIL: first diverging node y (aten) at corpus/found/ts-freeze-mkldnn-hardswish/model.yaml:14:5"),
            std::string::npos)
      << ts.output;
  EXPECT_NE(ts.output.find("\n    declined c: overwritten in place by prim::MKLDNNHardSwish_ in the compiled graph\n"), std::string::npos)
      << ts.output;
}

// `gbcheck bisect` on an adapter backend names the first diverging node from the adapter's own
// node values, with the nodes it declines, and says why when an adapter shows none.
TEST(PythonAdapters, BisectThroughAdaptersNamesTheFirstDivergingNode) {
  if (!on_libtorch_113()) GTEST_SKIP() << "the bugs were found on torch 1.13";
  if (std::string why = unavailable("nnc-py") + unavailable("ts-freeze"); !why.empty()) GTEST_SKIP() << why;
  testing::CommandResult nnc = testing::run_gbcheck_in_source_tree("bisect corpus/found/nnc-masked-softmax/model.yaml --backend nnc-py 2>&1");
  EXPECT_EQ(nnc.exit_code, 1) << nnc.output;
  EXPECT_NE(nnc.output.find("node:  probs = softmax(...) at corpus/found/nnc-masked-softmax/model.yaml:12:5\n"
                            "  32 of 32 elements differ; first at [0, 0]: eager 0.125, nnc-py "),
            std::string::npos)
      << nnc.output;
  EXPECT_NE(nnc.output.find("  show: gbcheck corpus/found/nnc-masked-softmax/model.yaml --backend nnc-py --intermediates --seed 0 --case 0\n"),
            std::string::npos)
      << nnc.output;
  testing::CommandResult ts = testing::run_gbcheck_in_source_tree("bisect corpus/found/ts-freeze-mkldnn-hardswish/model.yaml --backend ts-freeze 2>&1");
  EXPECT_EQ(ts.exit_code, 1) << ts.output;
  EXPECT_NE(ts.output.find("node:  y = aten(...) at corpus/found/ts-freeze-mkldnn-hardswish/model.yaml:14:5\n"), std::string::npos) << ts.output;
  EXPECT_NE(ts.output.find("\n  declined c: overwritten in place by prim::MKLDNNHardSwish_ in the compiled graph\n"), std::string::npos)
      << ts.output;
  testing::CommandResult old = testing::run_gbcheck_in_source_tree(
      "bisect corpus/examples/conv_bn_relu.yaml --backend broken-wrong --backends-config tests/data/adapters/backends.yaml 2>&1");
  EXPECT_EQ(old.exit_code, 1) << old.output;
  EXPECT_NE(old.output.find("\nstage: broken-wrong\n"), std::string::npos) << old.output;
  EXPECT_NE(old.output.find("\nnode:  none: adapter broken-wrong offers no node values (its hello lists no node_values feature)\n"),
            std::string::npos)
      << old.output;
}

// What each adapter shows of conv -> batch_norm -> relu: ts-freeze folds batch_norm into the conv
// and runs relu in place on it, so only relu's value is its own; nnc-py shows every node; the
// docs' example adapter (no node_values) offers none.
TEST(PythonAdapters, IntermediatesThroughAdaptersListWhatTheCompilerDeclines) {
  if (!on_libtorch_113()) GTEST_SKIP() << "what freezing folds is torch 1.13's";
  if (std::string why = unavailable("nnc-py") + unavailable("ts-freeze"); !why.empty()) GTEST_SKIP() << why;
  testing::CommandResult r = testing::run_gbcheck_in_source_tree("check corpus/examples/conv_bn_relu.yaml --cases 2 --backend ts-freeze --backend nnc-py "
                                     "--backend eager-py --backends-config tests/data/adapters/backends.yaml --intermediates");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("  ts-freeze: PASS: 1 nodes on 2 cases agree\n"
                          "    declined c: overwritten in place by aten::relu_ in the compiled graph\n"
                          "    declined bn: not in the frozen, optimized graph: folded or fused away by freeze/optimize_for_inference\n"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("  nnc-py: PASS: 3 nodes on 2 cases agree\n"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  eager-py: not compared: adapter eager-py offers no node values (its hello lists no node_values feature)\n"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace gbc
