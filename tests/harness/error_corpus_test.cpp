// Every invalid model in corpus/errors/ is rejected with exactly the diagnostics in its .expected
// file: location, message and hint are part of gbcheck's interface.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/model/model_loader.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ErrorCorpusTest, EveryInvalidModelGivesItsExpectedDiagnostics) {
  const fs::path dir = fs::path(GBCHECK_SOURCE_DIR) / "corpus" / "errors";
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    fs::path expected_path = entry.path();
    expected_path.replace_extension(".expected");
    ASSERT_TRUE(fs::exists(expected_path)) << "missing " << expected_path;
    // Paths in messages are as given: relative to the source dir, like a user's command line.
    std::string rel = "corpus/errors/" + entry.path().filename().string();
    std::string got;
    try {
      load_model_file(rel);
      got = "(loaded without errors)\n";
    } catch (const ModelError& e) {
      got = e.diagnostics().str();
    }
    EXPECT_EQ(got, read_file(expected_path)) << "for " << rel;
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

TEST(ErrorCorpusTest, EveryExampleModelLoads) {
  const fs::path dir = fs::path(GBCHECK_SOURCE_DIR) / "corpus" / "examples";
  int loaded = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    EXPECT_NO_THROW(load_model_file(entry.path().string())) << entry.path();
    ++loaded;
  }
  EXPECT_GE(loaded, 6);
}

}  // namespace
}  // namespace gbc
