// `gbcheck explain` and --fullgraph through the command line, and what the check's terminal line
// says about compiles: a graph break is listed with its code, location and hint; --fullgraph turns
// it into exit 1 naming it (explain and check alike); a first compile is not counted as a recompile.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/runner/check_report.h"
#include "tests/support/print_break_model.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

class ExplainCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("gbcheck-explain-test-" + std::to_string(getpid()) + ".yaml")).string();
    std::ofstream(path_) << testing::kPrintBreakModel;
  }
  void TearDown() override { fs::remove(path_); }

  // Runs the command line; returns the exit code, with stdout in out_.
  int gbcheck(std::vector<std::string> args) {
    args.insert(args.begin(), "gbcheck");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    std::ostringstream out;
    std::streambuf* saved = std::cout.rdbuf(out.rdbuf());
    int rc = cli_main(static_cast<int>(argv.size()), argv.data());
    std::cout.rdbuf(saved);
    out_ = out.str();
    return rc;
  }

  std::string path_;
  std::string out_;
};

TEST_F(ExplainCommand, ListsTheBreakWithCodeLocationAndHint) {
  ASSERT_EQ(gbcheck({"explain", path_, "--backend", "trace"}), kExitPass) << out_;
  EXPECT_NE(out_.find("summary: 2 compiled graphs, 1 graph break, 0 fallbacks, 0 recompiles"), std::string::npos) << out_;
  EXPECT_NE(out_.find("graph break GB001 at " + path_ + ":7:5: print has a side effect"), std::string::npos) << out_;
  EXPECT_NE(out_.find("hint: set check.reorderable_logging: true"), std::string::npos) << out_;
  EXPECT_NE(out_.find("graph 1: 1 op (exp) at " + path_ + ":8:5"), std::string::npos) << out_;
}

TEST_F(ExplainCommand, FullgraphMakesTheFirstBreakAFailure) {
  EXPECT_EQ(gbcheck({"explain", path_, "--backend", "trace", "--fullgraph"}), kExitDivergence);
  EXPECT_NE(out_.find("fullgraph: trace breaks the graph: GB001 at " + path_ + ":7:5"), std::string::npos) << out_;
  EXPECT_EQ(gbcheck({"check", path_, "--backend", "trace", "--fullgraph"}), kExitDivergence);
  EXPECT_NE(out_.find("expectation failed: fullgraph: graph break GB001 at " + path_ + ":7:5"), std::string::npos)
      << out_;
}

TEST_F(ExplainCommand, CheckLineCountsCompilesAndRecompilesApart) {
  // Two graphs around the print, each compiled once over both cases: no recompile.
  ASSERT_EQ(gbcheck({"check", path_, "--backend", "trace"}), kExitPass) << out_;
  EXPECT_NE(out_.find("compiles 2  recompiles 0"), std::string::npos) << out_;
  // mlp's dim B changes between cases: compiled once, recompiled once (B becomes dynamic).
  const std::string mlp = std::string(GBCHECK_SOURCE_DIR) + "/corpus/examples/mlp.yaml";
  ASSERT_EQ(gbcheck({"check", mlp, "--backend", "trace"}), kExitPass) << out_;
  EXPECT_NE(out_.find("compiles 2  recompiles 1"), std::string::npos) << out_;
  ASSERT_EQ(gbcheck({"check", mlp, "--backend", "trace", "--case", "3"}), kExitPass) << out_;
  EXPECT_NE(out_.find("compiles 1  recompiles 0"), std::string::npos) << out_;
}

}  // namespace
}  // namespace gbc
