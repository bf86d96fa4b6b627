// `gbcheck cache info` and `gbcheck cache clear` on a planted cache root: they count and remove
// cache entries only (content-hash names under cpu/ and cuda/), leave other files alone, and take
// the root from --cache-dir, else $GBCHECK_CACHE_DIR.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "harness/cli/cli.h"
#include "harness/runner/check_report.h"
#include "compiler/support/file_tree.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

const std::string kKey = "0123456789abcdef0123456789abcdef";

class CacheCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* env = std::getenv("GBCHECK_CACHE_DIR")) saved_env_ = env;
    root_ = fs::temp_directory_path() / ("gbcheck-cache-command-test-" + std::to_string(getpid()));
    { std::error_code ignored; remove_tree(fs::path(root_).string(), ignored); }
    write(root_ / "cpu" / (kKey + ".so"), 100);
    write(root_ / "cpu" / "README.txt", 7);  // not an entry
    write(root_ / "cuda" / kKey, 50);
  }
  void TearDown() override {
    { std::error_code ignored; remove_tree(fs::path(root_).string(), ignored); }
    if (saved_env_) setenv("GBCHECK_CACHE_DIR", saved_env_->c_str(), 1);
    else unsetenv("GBCHECK_CACHE_DIR");
  }

  static void write(const fs::path& path, size_t bytes) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << std::string(bytes, 'x');
  }

  // Runs the command line and returns its exit code; stdout goes to out_.
  int gbcheck(std::vector<std::string> args) {
    args.insert(args.begin(), "gbcheck");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    out_.str("");
    std::streambuf* saved = std::cout.rdbuf(out_.rdbuf());
    int rc = cli_main(static_cast<int>(argv.size()), argv.data());
    std::cout.rdbuf(saved);
    return rc;
  }

  fs::path root_;
  std::optional<std::string> saved_env_;
  std::ostringstream out_;
};

TEST_F(CacheCommand, InfoCountsEntriesPerCache) {
  ASSERT_EQ(gbcheck({"cache", "info", "--cache-dir", root_.string()}), kExitPass);
  const std::string out = out_.str();
  EXPECT_NE(out.find("cache: " + root_.string() + " (--cache-dir)"), std::string::npos) << out;
  EXPECT_NE(out.find("cpu: 1 entry, 100 B"), std::string::npos) << out;
  EXPECT_NE(out.find("cuda: 1 entry, 50 B"), std::string::npos) << out;
  EXPECT_NE(out.find("total: 2 entries, 150 B"), std::string::npos) << out;
  EXPECT_TRUE(fs::exists(root_ / "cpu" / (kKey + ".so")));
}

TEST_F(CacheCommand, ClearRemovesEntriesOnly) {
  ASSERT_EQ(gbcheck({"cache", "clear", "--cache-dir", root_.string()}), kExitPass);
  EXPECT_NE(out_.str().find("removed 2 entries (150 B) from " + root_.string()), std::string::npos) << out_.str();
  EXPECT_FALSE(fs::exists(root_ / "cpu" / (kKey + ".so")));
  EXPECT_FALSE(fs::exists(root_ / "cuda" / kKey));
  EXPECT_TRUE(fs::exists(root_ / "cpu" / "README.txt"));
  ASSERT_EQ(gbcheck({"cache", "info", "--cache-dir", root_.string()}), kExitPass);
  EXPECT_NE(out_.str().find("total: 0 entries, 0 B"), std::string::npos) << out_.str();
}

TEST_F(CacheCommand, RootFromTheEnvironment) {
  setenv("GBCHECK_CACHE_DIR", root_.c_str(), 1);
  ASSERT_EQ(gbcheck({"cache", "info"}), kExitPass);
  EXPECT_NE(out_.str().find("cache: " + root_.string() + " ($GBCHECK_CACHE_DIR)"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("total: 2 entries"), std::string::npos) << out_.str();
  ASSERT_EQ(gbcheck({"cache", "clear"}), kExitPass);
  EXPECT_FALSE(fs::exists(root_ / "cuda" / kKey));
}

TEST_F(CacheCommand, MissingRootHoldsNothing) {
  const std::string missing = (root_ / "missing").string();
  ASSERT_EQ(gbcheck({"cache", "clear", "--cache-dir", missing}), kExitPass);
  EXPECT_NE(out_.str().find("removed 0 entries (0 B)"), std::string::npos) << out_.str();
  EXPECT_FALSE(fs::exists(missing));
}

TEST_F(CacheCommand, NeedsAnAction) { EXPECT_EQ(gbcheck({"cache"}), kExitInvalid); }

}  // namespace
}  // namespace gbc
