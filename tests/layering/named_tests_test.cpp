// Every test a comment names exists: a path under tests/ written in a source file, a build or CI
// script, README.md or docs/ (a header's "Test: tests/ir/infer_test.cpp") must be a file of the
// tree, so that moving or renaming a test cannot leave its readers pointing at nothing. A failure
// names each file:line and the missing path.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "tests/support/temp_dir.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

bool is_scanned(const fs::path& p) {
  static const std::vector<std::string> exts = {".h", ".cpp", ".cmake", ".py", ".sh", ".md", ".yml", ".yaml"};
  const std::string ext = p.extension().string();
  return p.filename() == "CMakeLists.txt" || std::find(exts.begin(), exts.end(), ext) != exts.end();
}

// "file:line names PATH" for each path under tests/ named in the files below `roots` that does not exist.
std::vector<std::string> missing_tests(const fs::path& root, const std::vector<std::string>& roots) {
  static const std::regex named(R"((^|[^A-Za-z0-9_/.-])(tests/[A-Za-z0-9_/.-]*[A-Za-z0-9_]\.(cpp|h|py|sh)))");
  std::vector<std::string> out;
  auto scan = [&](const fs::path& file) {
    std::ifstream in(file);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
      for (std::sregex_iterator it(line.begin(), line.end(), named), end; it != end; ++it)
        if (!fs::exists(root / (*it)[2].str()))
          out.push_back(fs::relative(file, root).string() + ":" + std::to_string(n) + " names " + (*it)[2].str());
  };
  for (const std::string& r : roots) {
    const fs::path top = root / r;
    if (fs::is_regular_file(top)) {
      scan(top);
      continue;
    }
    for (const auto& entry : fs::recursive_directory_iterator(top))
      if (entry.is_regular_file() && is_scanned(entry.path())) scan(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

const std::vector<std::string> kRoots = {"compiler", "oracles", "harness", "tests",     "cmake",      "ci",
                                         "bench",    "adapters", "docs",   "README.md", "CMakeLists.txt"};

TEST(NamedTests, EveryTestACommentNamesExists) {
  std::string report;
  for (const std::string& m : missing_tests(GBCHECK_SOURCE_DIR, kRoots)) report += "  " + m + "\n";
  EXPECT_EQ(report, "") << "comments name tests that do not exist:\n" << report;
}

// The check itself: a name of a missing test is found, one of an existing test is not.
TEST(NamedTests, AMissingTestIsNamedWithItsLine) {
  testing::TempDir dir("named-tests");
  fs::create_directories(dir.root() / "compiler" / "x");
  fs::create_directories(dir.root() / "tests" / "x");
  // Spelled in parts, so that this file names no missing test itself.
  const std::string here = std::string("tests") + "/x/here_test.cpp", gone = std::string("tests") + "/x/gone_test.cpp";
  dir.file(here, "\n");
  dir.file("compiler/x/a.h", "// What a does.\n// Test: " + here + ", " + gone + ".\n");
  EXPECT_EQ(missing_tests(dir.root(), {"compiler"}), std::vector<std::string>{"compiler/x/a.h:2 names " + gone});
}

}  // namespace
}  // namespace gbc
