// `gbcheck bench` and check.expect.min_speedup: a compiled path below the threshold fails the
// bench with exit code 1 and a line naming both times, in the terminal and in --json; a threshold
// that is met passes. The end-to-end cases use thresholds no machine can miss (a million-fold
// speedup, a billionth of eager's speed), so they assert the check and not a timing; the exact
// rule is tested on constructed reports. `gbcheck bench DIR` runs every model of a folder into one
// table with each backend's geomean and worst case (harness/bench/bench_suite.h). On the CPU every
// backend is timed again with outputs reused (harness/bench/reused_allocations.h).
#include <ATen/ATen.h>
#include <c10/core/Allocator.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "harness/bench/bench_runner.h"
#include "harness/bench/bench_suite.h"
#include "harness/bench/reused_allocations.h"
#include "harness/cli/cli.h"
#include "harness/runner/check_report.h"
#include "compiler/support/file_tree.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

class BenchCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gbcheck-bench-command-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { { std::error_code ignored; remove_tree(fs::path(dir_).string(), ignored); } }

  // A small fusable model whose check.expect is `expect`.
  std::string model(const std::string& name, const std::string& expect, const fs::path& folder = {}) {
    const fs::path path = (folder.empty() ? dir_ : folder) / (name + ".yaml");
    std::ofstream(path) << "format: gbcheck/v1\n"
                           "name: "
                        << name
                        << "\n"
                           "inputs:\n"
                           "  x: {shape: [64], dtype: float32}\n"
                           "graph:\n"
                           "  - {id: a, op: mul, args: [x, 2.0]}\n"
                           "  - {id: y, op: tanh, args: [a]}\n"
                           "outputs: [y]\n"
                           "check:\n"
                           "  expect: "
                        << expect << "\n";
    return path.string();
  }

  // Runs `gbcheck bench PATH --backend gbc ...` and returns its exit code; stdout goes to out_.
  int bench(const std::string& path, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"gbcheck", "bench", path, "--backend", "gbc", "--warmup", "1", "--repeat", "3"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    out_.str("");
    std::streambuf* saved = std::cout.rdbuf(out_.rdbuf());
    const int rc = cli_main(static_cast<int>(argv.size()), argv.data());
    std::cout.rdbuf(saved);
    return rc;
  }

  fs::path dir_;
  std::ostringstream out_;
};

TEST_F(BenchCommand, SpeedupBelowMinSpeedupFailsWithBothTimes) {
  const std::string json = (dir_ / "slow.json").string();
  ASSERT_EQ(bench(model("slow", "{min_speedup: 1000000}"), {"--json", json}), kExitDivergence) << out_.str();
  const std::string out = out_.str();
  EXPECT_NE(out.find("FAIL gbc: speedup "), std::string::npos) << out;
  EXPECT_NE(out.find("is below check.expect.min_speedup 1000000.00 (eager "), std::string::npos) << out;
  EXPECT_NE(out.find("result: FAIL"), std::string::npos) << out;

  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("exit_code"), kExitDivergence);
  EXPECT_FALSE(j.at("pass").get<bool>());
  ASSERT_EQ(j.at("failures").size(), 1u);
  const nlohmann::json& gbc = j.at("backends").at(1);
  EXPECT_EQ(gbc.at("name"), "gbc");
  EXPECT_EQ(gbc.at("min_speedup"), 1000000.0);
  EXPECT_TRUE(j.at("backends").at(0).at("min_speedup").is_null());  // eager has none
}

// Each backend is timed twice on the CPU: as a caller runs it, and with outputs reused; GB/s comes
// from the second.
TEST_F(BenchCommand, TimesWithOutputsReusedApart) {
  const std::string json = (dir_ / "reused.json").string();
  ASSERT_EQ(bench(model("reused", "{graph_breaks: 0}"), {"--json", json}), kExitPass) << out_.str();
  EXPECT_NE(out_.str().find("reused ms"), std::string::npos) << out_.str();
  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_TRUE(j.at("outputs_reused").get<bool>());
  for (const nlohmann::json& b : j.at("backends")) {
    EXPECT_EQ(b.at("reused_run_ms").size(), 3u) << b.at("name");
    EXPECT_GT(b.at("reused_median_ms").get<double>(), 0.0) << b.at("name");
    EXPECT_DOUBLE_EQ(b.at("reused_gbs").get<double>(),
                     j.at("bytes_moved").get<double>() / (b.at("reused_median_ms").get<double>() * 1e6));
  }
  EXPECT_DOUBLE_EQ(j.at("backends").at(0).at("reused_speedup").get<double>(), 1.0);
}

// A freed block goes to the next allocation of the same size, and only inside the scope; the
// allocator before it is back afterwards, and blocks that outlive the scope stay valid.
TEST(ReusedAllocations, AFreedBlockServesTheNextAllocationOfItsSize) {
  c10::Allocator* before = c10::GetAllocator(c10::kCPU);
  at::Tensor outlives;
  {
    ReusedAllocations reuse;
    ASSERT_TRUE(reuse.active());
    EXPECT_NE(c10::GetAllocator(c10::kCPU), before);
    const void* first = nullptr;
    {
      at::Tensor t = at::empty({1 << 20}, at::kFloat);
      first = t.data_ptr();
    }
    at::Tensor same = at::empty({1 << 20}, at::kFloat);
    EXPECT_EQ(same.data_ptr(), first);
    at::Tensor other_size = at::empty({(1 << 20) + 1}, at::kFloat);
    EXPECT_NE(other_size.data_ptr(), first);
    outlives = at::full({1 << 20}, 2.5f);
    // ATen's raw_allocate users (some CPU kernels' scratch) need a plain pointer as the context.
    c10::Allocator* cache = c10::GetAllocator(c10::kCPU);
    void* raw = cache->raw_allocate(4096);
    cache->raw_deallocate(raw);
    EXPECT_EQ(cache->raw_allocate(4096), raw);
    cache->raw_deallocate(raw);
  }
  EXPECT_EQ(c10::GetAllocator(c10::kCPU), before);
  EXPECT_EQ(outlives.sum().item<float>(), 2.5f * (1 << 20));
  outlives.reset();  // freed for good through the cache's deleter
  // Outside the scope the allocator is the default again: nothing comes from the cache.
  EXPECT_EQ(at::empty({4}, at::kFloat).storage().data_ptr().get_deleter() == c10::GetAllocator(c10::kCPU)->raw_deleter(),
            true);
}

TEST_F(BenchCommand, MetMinSpeedupPassesAndBackendKeyWins) {
  // The general threshold alone would fail; gbc's own is met.
  EXPECT_EQ(bench(model("fast", "{min_speedup: 1000000, gbc: {min_speedup: 1.0e-9}}")), kExitPass) << out_.str();
  EXPECT_EQ(out_.str().find("FAIL"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("result: PASS"), std::string::npos) << out_.str();
}

TEST_F(BenchCommand, NoMinSpeedupNeverFails) {
  EXPECT_EQ(bench(model("plain", "{graph_breaks: 0}")), kExitPass) << out_.str();
}

// --fullgraph is an option of every command that runs backends; bench once ignored it and passed.
TEST_F(BenchCommand, FullgraphFailsOnAGraphBreak) {
  const fs::path path = dir_ / "breaks.yaml";
  std::ofstream(path) << "format: gbcheck/v1\nname: breaks\ninputs:\n  x: {shape: [64], dtype: float32}\ngraph:\n"
                         "  - {id: a, op: mul, args: [x, 2.0]}\n  - {op: print, args: [a], message: a}\n"
                         "  - {id: y, op: tanh, args: [a]}\noutputs: [y]\n";
  ASSERT_EQ(bench(path.string()), kExitPass) << out_.str();
  ASSERT_EQ(bench(path.string(), {"--fullgraph"}), kExitDivergence) << out_.str();
  EXPECT_NE(out_.str().find("FAIL gbc: breaks the graph 1 time under --fullgraph"), std::string::npos) << out_.str();
  EXPECT_EQ(bench(model("whole", "{graph_breaks: 0}"), {"--fullgraph"}), kExitPass) << out_.str();
}

BenchResult timed(const std::string& backend, double median_ms, std::optional<double> min_speedup) {
  BenchResult r;
  r.backend = backend;
  r.median_ms = median_ms;
  r.min_speedup = min_speedup;
  return r;
}

TEST(BenchReport, FailsExactlyBelowTheThreshold) {
  BenchReport rep;
  rep.results = {timed("eager", 10.0, std::nullopt), timed("gbc", 4.0, 2.5), timed("nnc", 5.0, 2.5)};
  for (BenchResult& r : rep.results) r.speedup = 10.0 / r.median_ms;
  // gbc: 2.5x meets 2.5; nnc: 2.0x does not.
  const std::vector<std::string> failures = rep.failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0],
            "nnc: speedup 2.00x is below check.expect.min_speedup 2.50 (eager 10.000 ms, nnc 5.000 ms)");
  EXPECT_EQ(rep.exit_code(), kExitDivergence);

  rep.results[2].min_speedup = 2.0;
  EXPECT_TRUE(rep.failures().empty());
  EXPECT_EQ(rep.exit_code(), kExitPass);
}

// A speedup below 0.005 once printed as "0.00x".
TEST(BenchReport, SpeedupsKeepTheirDigits) {
  EXPECT_EQ(format_speedup(2.5), "2.50x");
  EXPECT_EQ(format_speedup(0.1), "0.10x");
  EXPECT_EQ(format_speedup(0.00123), "0.00123x");
  EXPECT_EQ(format_speedup(0.0), "0.00x");
}

TEST(BenchReport, BackendThatRaisedFailsWithoutSpeedup) {
  BenchReport rep;
  rep.results = {timed("eager", 10.0, std::nullopt), timed("gbc", 0.0, 1.5)};
  rep.results[1].error = "kernel failed";
  ASSERT_EQ(rep.failures(), std::vector<std::string>{"gbc: raised: kernel failed"});
  EXPECT_EQ(rep.exit_code(), kExitDivergence);
}

// A folder: one table, a row per model (sorted by file name), each backend's geomean and worst case.
TEST_F(BenchCommand, FolderPrintsOneTableWithGeomeanAndWorstCase) {
  const fs::path suite = dir_ / "suite";
  fs::create_directories(suite / "sub");
  model("b_met", "{gbc: {min_speedup: 1.0e-9}}", suite);
  model("a_plain", "{graph_breaks: 0}", suite);
  model("in_a_subfolder", "{min_speedup: 1000000}", suite / "sub");  // not part of the suite
  std::ofstream(suite / "notes.txt") << "not a model\n";
  const std::string json = (dir_ / "suite.json").string();
  ASSERT_EQ(bench(suite.string(), {"--json", json}), kExitPass) << out_.str();
  const std::string out = out_.str();
  const size_t a = out.find("\na_plain "), b = out.find("\nb_met ");
  ASSERT_NE(a, std::string::npos) << out;
  ASSERT_NE(b, std::string::npos) << out;
  EXPECT_LT(a, b) << out;
  EXPECT_EQ(out.find("in_a_subfolder"), std::string::npos) << out;
  EXPECT_NE(out.find("(2 models)"), std::string::npos) << out;
  EXPECT_NE(out.find("gbc: geomean "), std::string::npos) << out;
  EXPECT_NE(out.find(" over 2 models, worst "), std::string::npos) << out;
  EXPECT_NE(out.find("0 below their min_speedup"), std::string::npos) << out;
  EXPECT_NE(out.find("result: PASS"), std::string::npos) << out;

  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("schema"), "gbcheck.bench_suite/v1");
  EXPECT_TRUE(j.at("pass").get<bool>());
  ASSERT_EQ(j.at("models").size(), 2u);
  EXPECT_EQ(j.at("models").at(0).at("schema"), "gbcheck.bench/v1");
  EXPECT_EQ(j.at("models").at(0).at("model").at("name"), "a_plain");
  EXPECT_EQ(j.at("models").at(1).at("backends").at(1).at("min_speedup"), 1.0e-9);
  ASSERT_EQ(j.at("summary").size(), 1u);
  const nlohmann::json& gbc = j.at("summary").at(0);
  EXPECT_EQ(gbc.at("backend"), "gbc");
  EXPECT_EQ(gbc.at("models"), 2);
  const double s0 = j.at("models").at(0).at("backends").at(1).at("speedup");
  const double s1 = j.at("models").at(1).at("backends").at(1).at("speedup");
  EXPECT_NEAR(gbc.at("geomean_speedup").get<double>(), std::sqrt(s0 * s1), 1e-9 * std::sqrt(s0 * s1));
  EXPECT_EQ(gbc.at("worst_speedup").get<double>(), std::min(s0, s1));
  EXPECT_EQ(gbc.at("worst_model"), s0 < s1 ? "a_plain" : "b_met");
}

TEST_F(BenchCommand, FolderFailsWhenOneModelMissesItsMinSpeedup) {
  const fs::path suite = dir_ / "suite";
  fs::create_directories(suite);
  model("fast", "{gbc: {min_speedup: 1.0e-9}}", suite);
  model("slow", "{min_speedup: 1000000}", suite);
  const std::string json = (dir_ / "suite.json").string();
  ASSERT_EQ(bench(suite.string(), {"--json", json}), kExitDivergence) << out_.str();
  const std::string out = out_.str();
  EXPECT_NE(out.find("FAIL slow: gbc: speedup "), std::string::npos) << out;
  EXPECT_EQ(out.find("FAIL fast"), std::string::npos) << out;
  EXPECT_NE(out.find("1 below their min_speedup"), std::string::npos) << out;
  EXPECT_NE(out.find("result: FAIL"), std::string::npos) << out;
  std::ifstream in(json);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("exit_code"), kExitDivergence);
  ASSERT_EQ(j.at("failures").size(), 1u);
  EXPECT_EQ(j.at("summary").at(0).at("below_min_speedup"), 1);
}

// Every model is loaded before any runs: an invalid one stops the suite with its diagnostics.
TEST_F(BenchCommand, FolderWithAnInvalidModelStopsBeforeTiming) {
  const fs::path suite = dir_ / "suite";
  fs::create_directories(suite);
  model("a_valid", "{graph_breaks: 0}", suite);
  std::ofstream(suite / "b_broken.yaml") << "format: gbcheck/v1\nname: broken\ngraph: []\noutputs: [nothing]\n";
  EXPECT_EQ(bench(suite.string()), kExitInvalid) << out_.str();
  EXPECT_EQ(out_.str().find("gbcheck bench |"), std::string::npos) << out_.str();

  const fs::path empty = dir_ / "empty";
  fs::create_directories(empty);
  EXPECT_EQ(bench(empty.string()), kExitInvalid) << out_.str();
}

TEST(BenchSuite, GeomeanWorstCaseAndFailuresOverModels) {
  auto report = [](const std::string& name, double eager_ms, double gbc_ms, std::optional<double> min) {
    BenchReport rep;
    rep.model_name = name;
    rep.results = {timed("eager", eager_ms, std::nullopt), timed("gbc", gbc_ms, min)};
    for (BenchResult& r : rep.results) r.speedup = eager_ms / r.median_ms;
    return rep;
  };
  BenchSuite suite;
  suite.reports = {report("m1", 8.0, 2.0, 1.5), report("m2", 2.0, 4.0, 1.0), report("m3", 9.0, 1.0, std::nullopt)};
  // Speedups 4x, 0.5x, 9x: geomean (4 * 0.5 * 9)^(1/3) = 18^(1/3); m2 misses its 1.0.
  const SuiteSummary s = suite.summary("gbc");
  EXPECT_EQ(s.models, 3);
  EXPECT_NEAR(s.geomean, std::cbrt(18.0), 1e-12);
  EXPECT_EQ(s.worst, 0.5);
  EXPECT_EQ(s.worst_model, "m2");
  EXPECT_EQ(s.below_min_speedup, 1);
  EXPECT_EQ(suite.failures(),
            std::vector<std::string>{"m2: gbc: speedup 0.50x is below check.expect.min_speedup 1.00 (eager 2.000 ms, gbc 4.000 ms)"});
  EXPECT_EQ(suite.exit_code(), kExitDivergence);
  suite.invalid.push_back("m4: the eager reference fails");
  EXPECT_EQ(suite.exit_code(), kExitInvalid);
  EXPECT_EQ(suite.backends(), std::vector<std::string>{"gbc"});
}

}  // namespace
}  // namespace gbc
