// The shipped adapters (adapters/*.py, registered in configs/backends.yaml) through the built
// gbcheck on every model of corpus/examples: ts-freeze and nnc-py pass where Debian's torch 1.13
// is installed; inductor and aot-eager run where `import torch` gives 2.0 or later and skip with
// the reason otherwise; `gbcheck backends` lists them with their availability.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
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
  for (const char* line : {"gbc             built-in  available", "ts-freeze       adapter   available",
                           "nnc-py          adapter   available"})
    EXPECT_NE(r.output.find(line), std::string::npos) << line << "\n" << r.output;
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

}  // namespace
}  // namespace gbc
