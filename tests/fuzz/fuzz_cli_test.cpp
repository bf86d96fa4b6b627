// The CI smoke test of fuzzing through the command line: a few seconds of `gbcheck fuzz` against
// gbc on small graphs, then `gbcheck db report --junit` and `gbcheck db merge` on its store, and
// the usage errors users can make (exit code 2 with a message).
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
#include "harness/store/fuzz_store.h"
#include "compiler/support/file_tree.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

class FuzzCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gbcheck-fuzz-cli-test-" + std::to_string(getpid()));
    { std::error_code ignored; remove_tree(fs::path(dir_).string(), ignored); }
    fs::create_directories(dir_);
  }
  void TearDown() override { { std::error_code ignored; remove_tree(fs::path(dir_).string(), ignored); } }

  // Runs `gbcheck ARGS...`; stdout goes to out_, stderr to err_.
  int gbcheck(std::vector<std::string> args) {
    args.insert(args.begin(), "gbcheck");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    out_.str("");
    err_.str("");
    std::streambuf* saved_out = std::cout.rdbuf(out_.rdbuf());
    std::streambuf* saved_err = std::cerr.rdbuf(err_.rdbuf());
    int rc = cli_main(static_cast<int>(argv.size()), argv.data());
    std::cout.rdbuf(saved_out);
    std::cerr.rdbuf(saved_err);
    return rc;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
  std::ostringstream out_, err_;
};

TEST_F(FuzzCli, SmokeFuzzReportAndMerge) {
  ASSERT_EQ(gbcheck({"fuzz", "--out", path("run"), "--cases", "4", "--backends", "gbc", "--max-nodes", "8",
                     "--graph-cases", "2", "--jobs", "2", "--reduce-checks", "0", "--quiet"}),
            kExitPass)
      << out_.str() << err_.str();
  EXPECT_NE(out_.str().find(" finished: 4/4 graphs ("), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("gbcheck db report " + path("run")), std::string::npos) << out_.str();
  int64_t fresh = 0;
  {
    FuzzStore store(path("run/fuzz.db"), false);
    EXPECT_EQ(store.counts().cases, 4);
    for (const auto& s : store.signatures()) fresh += s.status == "new";
  }

  int rc = gbcheck({"db", "report", path("run"), "--junit", path("junit.xml")});
  EXPECT_EQ(rc, fresh ? kExitDivergence : kExitPass) << out_.str() << err_.str();
  EXPECT_NE(out_.str().find("4 graphs checked"), std::string::npos) << out_.str();
  std::ifstream junit(path("junit.xml"));
  std::string xml((std::istreambuf_iterator<char>(junit)), std::istreambuf_iterator<char>());
  EXPECT_NE(xml.find("failures=\"" + std::to_string(fresh) + "\""), std::string::npos) << xml;

  ASSERT_EQ(gbcheck({"db", "merge", path("merged.db"), path("run")}), kExitPass) << err_.str();
  EXPECT_NE(out_.str().find("1 runs, 4 cases"), std::string::npos) << out_.str();
}

// A host compiler that rejects every generated module: gbc's kernels fall back to ATen (FB001)
// and every output passes, yet the fuzzer records gbc's internal error, since invalid generated
// code is a code generator bug (harness/fuzz/campaign/graph_check.h). The test process itself
// never compiles a kernel, so the workers it forks find the host compiler from this environment.
TEST_F(FuzzCli, AKernelTheHostCompilerRejectsIsTheBackendsFinding) {
  ::setenv("GBCHECK_CXX", "g++ -fno-such-flag", 1);
  const int rc = gbcheck({"fuzz", "--out", path("rejected"), "--cases", "3", "--seed", "18000", "--backends", "gbc",
                          "--max-nodes", "8", "--graph-cases", "1", "--no-cache", "--reduce-checks", "0", "--quiet"});
  ::unsetenv("GBCHECK_CXX");
  ASSERT_EQ(rc, kExitPass) << out_.str() << err_.str();
  FuzzStore store(path("rejected/fuzz.db"), false);
  std::vector<std::string> keys;
  for (const auto& s : store.signatures()) keys.push_back(s.key + " (" + s.kind + ")");
  ASSERT_EQ(keys.size(), 1u) << testing::PrintToString(keys);
  EXPECT_EQ(keys[0], "gbc internal-error generated kernel rejected by the host compiler (FB001) [] (internal-error)");
}

TEST_F(FuzzCli, UsageErrorsExitTwoWithAMessage) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  std::vector<Case> cases = {
      {{"fuzz", "--out", path("a"), "--shard", "4/4"}, "--shard takes i/N"},
      {{"fuzz", "--out", path("a"), "--time", "5x"}, "not a duration: '5x'"},
      {{"fuzz", "--out", path("a"), "--backends", "gbcc", "--cases", "1"}, "unknown backend 'gbcc'"},
      {{"fuzz", "--out", path("b"), "--resume"}, "has no unfinished run"},
      {{"db", "report", path("missing.db")}, "no such store"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(gbcheck(c.args), kExitInvalid) << c.args[1] << " " << c.args.back();
    EXPECT_NE(err_.str().find(c.message), std::string::npos) << err_.str();
  }
}

}  // namespace
}  // namespace gbc
