// `gbcheck check A.yaml B.yaml DIR` (harness/cli/check_models.h): each model's report under its
// `== MODEL (i/N) ==` line, a folder standing for its *.yaml files in name order, a model that
// does not load reported and skipped, a summary with a line per model that did not pass, the
// highest exit code, -q's line per model, and the options that name one model's output or case
// refused. Runs the built gbcheck on the gbc-interp backend (no kernels to compile).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

class CheckModels : public ::testing::Test {
 protected:
  testing::CommandResult gbcheck(const std::string& args) {
    return testing::run_gbcheck_in_source_tree(args + " --backend gbc-interp --cases 2");
  }
  // A copy of corpus/docs/rowmax.yaml (it passes on gbc-interp) as NAME in the test's folder.
  std::string passing_model(const std::string& name) {
    fs::create_directories(fs::path(tmp_.path(name)).parent_path());
    fs::copy_file(fs::path(GBCHECK_SOURCE_DIR) / "corpus/docs/rowmax.yaml", tmp_.path(name));
    return tmp_.path(name);
  }

  testing::TempDir tmp_{"check-models-test"};
};

TEST_F(CheckModels, TheDefaultCommandChecksEachModelThenSummarizes) {
  testing::CommandResult r = gbcheck("corpus/docs/rowmax.yaml corpus/examples/mlp.yaml");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t first = r.output.find("== corpus/docs/rowmax.yaml (1/2) ==\ngbcheck ");
  const size_t second = r.output.find("\n\n== corpus/examples/mlp.yaml (2/2) ==\ngbcheck ");
  ASSERT_NE(first, std::string::npos) << r.output;
  ASSERT_NE(second, std::string::npos) << r.output;
  EXPECT_LT(first, second);
  EXPECT_NE(r.output.find("| rowmax (corpus/docs/rowmax.yaml) |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| mlp (corpus/examples/mlp.yaml) |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("result: PASS"), r.output.rfind("result: PASS")) << "one result line per model:\n" << r.output;
  EXPECT_NE(r.output.find("\n\nsummary: 2 models: 2 passed\n"), std::string::npos) << r.output;
}

TEST_F(CheckModels, AFolderStandsForItsYamlFilesInNameOrder) {
  passing_model("models/b.yaml");
  passing_model("models/a.yaml");
  passing_model("models/nested/c.yaml");  // a subfolder's models are not the folder's
  tmp_.file("models/notes.txt", "not a model");
  testing::CommandResult r = gbcheck("check " + tmp_.path("models"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const size_t a = r.output.find("== " + tmp_.path("models/a.yaml") + " (1/2) ==\n");
  const size_t b = r.output.find("== " + tmp_.path("models/b.yaml") + " (2/2) ==\n");
  EXPECT_NE(a, std::string::npos) << r.output;
  EXPECT_NE(b, std::string::npos) << r.output;
  EXPECT_LT(a, b);
  EXPECT_EQ(r.output.find("c.yaml"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("summary: 2 models: 2 passed\n"), std::string::npos) << r.output;

  fs::create_directories(tmp_.path("empty"));
  testing::CommandResult empty = gbcheck("check " + tmp_.path("empty"));
  EXPECT_EQ(empty.exit_code, 2) << empty.output;
  EXPECT_NE(empty.output.find("gbcheck: " + tmp_.path("empty") + " holds no model (*.yaml) to check: a folder stands for the *.yaml files directly in it"), std::string::npos)
      << empty.output;
}

// An invalid model prints its diagnostics where its report would be, and the models after it run.
TEST_F(CheckModels, AModelThatDoesNotLoadIsReportedAndTheRunGoesOn) {
  const std::string bad = tmp_.file("bad.yaml", "format: gbcheck/v1\nname: bad\ninputs:\n  x: {shape: [4], dtype: float32}\n"
                                                "graph:\n  - {id: y, op: nosuchop, args: [x]}\noutputs: [y]\n");
  testing::CommandResult r = gbcheck("check corpus/docs/rowmax.yaml " + bad + " no/such.yaml corpus/examples/mlp.yaml");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  const size_t bad_at = r.output.find("== " + bad + " (2/4) ==\n" + bad + ":6:");
  ASSERT_NE(bad_at, std::string::npos) << r.output;
  EXPECT_NE(r.output.find("== no/such.yaml (3/4) ==\nno/such.yaml: error: no such model file"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("== corpus/examples/mlp.yaml (4/4) ==\ngbcheck "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\nsummary: 4 models: 2 passed, 2 invalid\n"
                          "  " + bad + ": exit 2: " + bad + ":6:"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("\n  no/such.yaml: exit 2: no/such.yaml: error: no such model file\n"), std::string::npos) << r.output;
}

// The exit code is the highest of the models'; -q prints a line per model and the summary.
TEST_F(CheckModels, QuietPrintsALinePerModelAndExitsWithTheHighestCode) {
  // corpus/docs/rnn.yaml fails gbc-interp's drift oracle (docs/oracles.md).
  testing::CommandResult r = gbcheck("check -q corpus/docs/rowmax.yaml corpus/docs/rnn.yaml");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("corpus/docs/rowmax.yaml: PASS\n"
                          "corpus/docs/rnn.yaml: FAIL\n"
                          "summary: 2 models: 1 passed, 1 failed\n"
                          "  corpus/docs/rnn.yaml: exit 1: gbc-interp failed drift\n"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("=="), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("result:"), std::string::npos) << r.output;

  const std::string bad = tmp_.file("bad.yaml", "format: gbcheck/v1\n");
  testing::CommandResult invalid = gbcheck("check -q corpus/docs/rnn.yaml " + bad);
  EXPECT_EQ(invalid.exit_code, 2) << invalid.output;
  EXPECT_NE(invalid.output.find("summary: 2 models: 0 passed, 1 failed, 1 invalid\n"), std::string::npos) << invalid.output;
}

// --json, --case and the like name one model's file or case: with several models, exit 2 before
// anything runs.
TEST_F(CheckModels, OptionsThatNameOneModelsOutputOrCaseAreRefused) {
  for (const std::string& option : {"--json " + tmp_.path("r.json"), "--save-inputs " + tmp_.path("in"),
                                    std::string("--case 0"), "--trace " + tmp_.path("trace"), std::string("--input float32[2]")}) {
    testing::CommandResult r = gbcheck("check corpus/docs/rowmax.yaml corpus/examples/mlp.yaml " + option);
    EXPECT_EQ(r.exit_code, 2) << option << ":\n" << r.output;
    const std::string flag = option.substr(0, option.find(' '));
    EXPECT_NE(r.output.find("gbcheck: " + flag + " names one model's output or case, and this run checks several models"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("=="), std::string::npos) << option << ": nothing runs:\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(tmp_.path("r.json")));
}

}  // namespace
}  // namespace gbc
