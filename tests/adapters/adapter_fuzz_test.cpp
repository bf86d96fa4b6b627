// The fuzz smoke run through adapters (label fuzz-smoke): `gbcheck fuzz --backends
// ts-freeze,nnc-py,broken-count` runs every backend on every graph, each in the graph's sandbox;
// the broken adapter's failures are signed under its own name (never under the backends that
// passed), the store and `gbcheck db report` show the backend and replay it with the run's
// --backends-config, and the new signature is reduced through that same adapter.
// harness/fuzz/campaign/graph_check.h, repro_folder.h and harness/store/store_report.h, as users
// run them. Adapters from configs/backends.yaml and tests/data/adapters/backends.yaml.
// And one adapter process across a worker's graphs (harness/adapters/adapter_session.h): adapters
// that crash or hang on the second model a process is sent fail the second and fourth graphs
// only, so the worker kept each adapter across graphs and restarted it after its failure.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "compiler/support/file_tree.h"
#include "harness/store/fuzz_store.h"
#include "tests/support/run_command.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(AdapterFuzz, EveryBackendRunsEveryGraphAndFailuresAreSignedAndReducedPerBackend) {
  const fs::path dir = fs::temp_directory_path() / ("gbcheck-adapter-fuzz-" + std::to_string(::getpid()));
  { std::error_code ignored; remove_tree(dir.string(), ignored); }
  const std::string config = fs::absolute(fs::path(GBCHECK_SOURCE_DIR) / "tests/data/adapters/backends.yaml").string();
  testing::CommandResult run = testing::run_gbcheck_in_source_tree(
      "fuzz --out " + dir.string() + " --cases 1 --seed 100 --backends ts-freeze,nnc-py,broken-count --backends-config " + config +
      " --min-nodes 4 --max-nodes 6 --no-breaks --graph-cases 2 --reduce-checks 5 --quiet");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_TRUE(has(run.output, " finished: 1/1 graphs (")) << run.output;

  std::string broken_key;
  {
    FuzzStore store((dir / "fuzz.db").string(), false);
    EXPECT_EQ(store.counts().cases, 1);
    ASSERT_EQ(store.runs().size(), 1u);
    EXPECT_EQ(store.runs()[0].backends, "ts-freeze,nnc-py,broken-count");
    for (const SignatureInfo& s : store.signatures()) {
      // Signed per backend: the key and the summary name the backend that failed.
      EXPECT_EQ(s.key.rfind(s.backend + " ", 0), 0u) << s.key;
      EXPECT_TRUE(s.backend == "broken-count" || s.backend == "nnc-py" || s.backend == "ts-freeze") << s.key;
      if (s.backend == "broken-count") {
        broken_key = s.key;
        EXPECT_EQ(s.reduce_state, "done") << s.key;
        EXPECT_TRUE(has(s.summary, "answered case N with")) << s.summary;
      }
    }
    ASSERT_FALSE(broken_key.empty()) << "the broken adapter's failure was not recorded";
    std::optional<SignatureInfo> broken = store.signature(broken_key);
    ASSERT_TRUE(broken.has_value());
    // Reduced through the broken adapter itself: the reduction's summary names it.
    std::ifstream summary(dir / broken->repro_path / "reduced" / "summary.json");
    ASSERT_TRUE(summary.good()) << broken->repro_path;
    nlohmann::json j = nlohmann::json::parse(summary);
    EXPECT_EQ(j["backend"], "broken-count");
    EXPECT_LE(j["nodes_after"].get<int>(), j["nodes_before"].get<int>());
  }

  testing::CommandResult report = testing::run_gbcheck_in_source_tree("db report " + dir.string());
  EXPECT_EQ(report.exit_code, 1) << report.output;  // new signatures
  EXPECT_TRUE(has(report.output, "  " + broken_key + "\n    backend: broken-count\n")) << report.output;
  EXPECT_TRUE(has(report.output, " --backend broken-count --backends-config " + config + "\n")) << report.output;
  { std::error_code ignored; remove_tree(dir.string(), ignored); }
}

TEST(AdapterFuzz, OneAdapterServesTheWorkersGraphsAndIsRestartedAfterItFails) {
  const fs::path dir = fs::temp_directory_path() / ("gbcheck-adapter-keep-" + std::to_string(::getpid()));
  { std::error_code ignored; remove_tree(dir.string(), ignored); }
  fs::create_directories(dir / "tmp");
  const std::string config = fs::absolute(fs::path(GBCHECK_SOURCE_DIR) / "tests/data/adapters/backends.yaml").string();
  testing::CommandResult run = testing::run_gbcheck_in_source_tree(
      "fuzz --out " + (dir / "out").string() + " --cases 4 --seed 100 --backends broken-crash-second,broken-hang-second --backends-config " +
          config + " --min-nodes 4 --max-nodes 6 --no-breaks --graph-cases 2 --reduce-checks 0 --quiet",
      "TMPDIR=" + (dir / "tmp").string());
  ASSERT_EQ(run.exit_code, 0) << run.output;
  {
    FuzzStore store((dir / "out" / "fuzz.db").string(), false);
    auto count = [&](const std::string& where) {
      return store.db().scalar("SELECT count(*) FROM hits h JOIN signatures s ON s.id = h.signature_id WHERE " + where).value_or(-1);
    };
    EXPECT_EQ(store.db().scalar("SELECT count(*) FROM cases WHERE outcome = 'pass' AND idx IN (0, 2)"), 2);
    EXPECT_EQ(store.db().scalar("SELECT count(*) FROM cases WHERE outcome = 'fail' AND idx IN (1, 3)"), 2);
    // Each failure is the adapter's own, with the message its way of failing gives.
    EXPECT_EQ(count("h.idx IN (1, 3) AND s.backend = 'broken-crash-second' AND s.key LIKE '%crashed during case N: killed by SIGSEGV%'"), 2);
    EXPECT_EQ(count("h.idx IN (1, 3) AND s.backend = 'broken-hang-second' AND s.key LIKE '%timed out: no answer to case N%'"), 2);
    EXPECT_EQ(count("1"), 4);
  }
  // The worker's adapters, killed or not, left no scratch folder behind.
  EXPECT_TRUE(fs::is_empty(dir / "tmp"));
  { std::error_code ignored; remove_tree(dir.string(), ignored); }
}

}  // namespace
}  // namespace gbc
