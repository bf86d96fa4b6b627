// The shipped adapters (adapters/*.py, registered in configs/backends.yaml) through the built
// gbcheck on every model of corpus/examples: ts-freeze and nnc-py pass where Debian's torch 1.13
// is installed; inductor and aot-eager run where `import torch` gives 2.0 or later and skip with
// the reason otherwise; `gbcheck backends` lists them with their availability; the NNC bug kept
// in corpus/found/ still reproduces.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <map>
#include <sstream>
#include <string>

#include "tests/support/run_command.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

testing::CommandResult gbcheck(const std::string& args) {
  return testing::run_command("cd " + std::string(GBCHECK_SOURCE_DIR) + " && " + testing::built_binary("gbcheck") + " " + args);
}

nlohmann::json backends_json() {
  testing::CommandResult r = gbcheck("backends --json 2>/dev/null");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nlohmann::json::parse(r.output, nullptr, false);
}

// "" when the backend can run here, else why not.
std::string unavailable(const std::string& name) {
  for (const auto& b : backends_json())
    if (b["name"] == name) return b["available"].get<bool>() ? "" : b["reason"].get<std::string>();
  return "not listed by gbcheck backends";
}

std::vector<std::string> corpus_examples() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(fs::path(GBCHECK_SOURCE_DIR) / "corpus/examples"))
    if (e.path().extension() == ".yaml") out.push_back("corpus/examples/" + e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// Every example through one backend, all in one process per model (the adapter starts once).
void check_every_example(const std::string& backend) {
  if (std::string why = unavailable(backend); !why.empty()) GTEST_SKIP() << backend << " cannot run here: " << why;
  const std::vector<std::string> models = corpus_examples();
  ASSERT_GE(models.size(), 6u);
  for (const std::string& m : models) {
    testing::CommandResult r = gbcheck("check " + m + " --cases 4 --backend " + backend);
    EXPECT_EQ(r.exit_code, 0) << m << " on " << backend << ":\n" << r.output;
  }
}

TEST(PythonAdapters, TsFreezePassesEveryCorpusExample) { check_every_example("ts-freeze"); }
TEST(PythonAdapters, NncPyPassesEveryCorpusExample) { check_every_example("nnc-py"); }
TEST(PythonAdapters, InductorPassesEveryCorpusExampleWhereTorchIs2) { check_every_example("inductor"); }
TEST(PythonAdapters, AotEagerPassesEveryCorpusExampleWhereTorchIs2) { check_every_example("aot-eager"); }

TEST(PythonAdapters, BackendsListsBuiltInAndExternalBackendsWithAvailability) {
  testing::CommandResult r = gbcheck("backends");
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
  testing::CommandResult extra = gbcheck("backends --backends-config tests/data/adapters/backends.yaml");
  EXPECT_NE(extra.output.find("eager-py"), std::string::npos) << extra.output;
  testing::CommandResult bad = testing::run_command("cd " + std::string(GBCHECK_SOURCE_DIR) + " && GBCHECK_BACKENDS_CONFIG=corpus/examples/mlp.yaml " +
                                                    testing::built_binary("gbcheck") + " backends");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("corpus/examples/mlp.yaml:"), std::string::npos) << bad.output;
}

TEST(PythonAdapters, UnavailableBackendsStopACheckWithTheReason) {
  std::string why = unavailable("inductor");
  if (why.empty()) GTEST_SKIP() << "inductor can run here";
  testing::CommandResult r = gbcheck("check corpus/examples/mlp.yaml --backend inductor");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("backend inductor cannot run here: " + why), std::string::npos) << r.output;
}

// corpus/found/nnc-masked-softmax: torch 1.13's NNC makes a fully masked softmax row NaN, through
// both NNC paths. When a torch without the bug runs this, the model passes and this test fails:
// then update the found model's README (the bug is fixed in that version) and this test.
TEST(PythonAdapters, TheFoundNncBugReproducesOnTorch113) {
  if (gbcheck("--version").output.find("LibTorch 1.13") == std::string::npos) GTEST_SKIP() << "the bug was found on torch 1.13";
  testing::CommandResult r = gbcheck("check corpus/found/nnc-masked-softmax/model.yaml --cases 2");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("  nnc-py  FAIL  0/2 cases"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  nnc     FAIL  0/2 cases"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("(expected 0.125, got nan)"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace gbc
