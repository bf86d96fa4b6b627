// What a new user hit (issue 15), run as a user runs it: the built gbcheck on the example models.
// Each test is a defect that gave a wrong answer, a false pass or an unhelpful message: options
// and environment variables validated as strictly as their siblings, --json checked before the
// run, a crash still writing its report, stores not left behind by failed merges.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

class NewUser : public ::testing::Test {
 protected:
  // Runs `gbcheck ARGS` in the source tree (paths in messages as a user types them).
  testing::CommandResult gbcheck(const std::string& args, const std::string& env = "") {
    return testing::run_command("cd " + std::string(GBCHECK_SOURCE_DIR) + " && " + env + " " +
                                testing::built_binary("gbcheck") + " " + args);
  }
  std::string file(const std::string& name, const std::string& text) { return tmp_.file(name, text); }
  std::string path(const std::string& name) const { return tmp_.path(name); }
  static bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

  testing::TempDir tmp_{"new-user-test"};
};

TEST_F(NewUser, AnUnknownChannelInGbcheckLogsIsRejectedAsOnTheCommandLine) {
  testing::CommandResult r = gbcheck("corpus/examples/mlp.yaml -n 1", "GBCHECK_LOGS=graph_breaks,recompile");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "$GBCHECK_LOGS: unknown log channel 'recompile'")) << r.output;
  r = gbcheck("corpus/examples/mlp.yaml -n 1 -q", "GBCHECK_LOGS=graph_breaks");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// A seed above INT64_MAX was clamped silently; `-n 0` printed a 300-digit range. Every integer
// option says which whole numbers it takes, before anything runs.
TEST_F(NewUser, OptionValuesOutOfRangeAreRejectedWithTheirRange) {
  testing::CommandResult r = gbcheck("corpus/examples/mlp.yaml --seed 9223372036854775808");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "'9223372036854775808' is out of range: expected a whole number >= 0")) << r.output;
  r = gbcheck("corpus/examples/mlp.yaml -n 0");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "'0' is out of range: expected a whole number from 1 to 2147483647")) << r.output;
  EXPECT_LT(r.output.size(), 300u) << r.output;
  r = gbcheck("corpus/examples/mlp.yaml --case 1.5");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "'1.5' is not a whole number")) << r.output;
  r = gbcheck("fuzz --out " + path("f") + " --seed -1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_FALSE(fs::exists(path("f")));
  r = gbcheck("reduce corpus/examples/mlp.yaml --timeout -3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "'-3' is out of range: expected a number >= 0.001")) << r.output;
}

// An unwritable --json path was found only after the whole check ran (exit 2, verdict hidden).
TEST_F(NewUser, AnUnwritableJsonPathStopsBeforeTheRun) {
  for (const std::string& cmd : {"corpus/examples/mlp.yaml", "explain corpus/examples/mlp.yaml",
                                 "bench corpus/examples/mlp.yaml", "bisect corpus/examples/mlp.yaml"}) {
    testing::CommandResult r = gbcheck(cmd + " --json " + path("no/such/folder/r.json"));
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "cannot write " + path("no/such/folder/r.json") + ": no folder")) << r.output;
    EXPECT_FALSE(contains(r.output, "result:")) << cmd << ": ran before rejecting the path\n" << r.output;
  }
  testing::CommandResult r = gbcheck("corpus/examples/mlp.yaml -n 1 -q --json " + path("r.json"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(path("r.json")));
}

// `db merge OUT missing` exited 2 and left an empty OUT store behind.
TEST_F(NewUser, AFailedMergeLeavesNoStore) {
  testing::CommandResult r = gbcheck("db merge " + path("merged.db") + " " + path("missing.db"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, path("missing.db") + ": no such store")) << r.output;
  EXPECT_FALSE(fs::exists(path("merged.db")));
}

// `{id: y, op: if, result: t}` was reported as "'y' is local to an if branch".
TEST_F(NewUser, AnIdOnAnIfIsReportedAsSuch) {
  testing::CommandResult r = gbcheck("corpus/errors/id_on_if.yaml");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "corpus/errors/id_on_if.yaml:8:9: error: if: an if has no id: it is named by its result ('t')"))
      << r.output;
  EXPECT_FALSE(contains(r.output, "local to an if branch")) << r.output;
}

// Mistakes a new user makes in the first minute get messages that name the mistake.
TEST_F(NewUser, FirstMinuteMistakesAreNamed) {
  testing::CommandResult r = gbcheck("bogus-command");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown command 'bogus-command' (commands: check, ops, explain")) << r.output;
  r = gbcheck("--bogus");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown option '--bogus' for `gbcheck check`")) << r.output;
  r = gbcheck("corpus/examples/mlp.yaml --sed 3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown option '--sed' for `gbcheck check`; did you mean '--seed'?")) << r.output;
  r = gbcheck("cache");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "gbcheck cache needs one of:\n  gbcheck cache info: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "\n  gbcheck cache clear: ")) << r.output;
  r = gbcheck("corpus/examples");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "corpus/examples: error: is a directory, not a model file")) << r.output;
  r = gbcheck(file("empty.yaml", "\n"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "error: the model file is empty")) << r.output;
}

// `--log kernels` once mixed IR, generated source and cache status (1,500 lines for 8 ops): the
// source has its own channel, output_code, as in TORCH_LOGS.
TEST_F(NewUser, GeneratedSourceHasItsOwnLogChannel) {
  const std::string run = "corpus/examples/mlp.yaml --backend gbc -n 1 -q --no-cache --cache-dir " + path("cache");
  testing::CommandResult kernels = gbcheck(run + " --log kernels");
  EXPECT_EQ(kernels.exit_code, 0) << kernels.output;
  EXPECT_FALSE(contains(kernels.output, "generated source")) << kernels.output;
  EXPECT_TRUE(contains(kernels.output, "compiled into")) << kernels.output;
  testing::CommandResult code = gbcheck(run + " --log output_code");
  EXPECT_EQ(code.exit_code, 0) << code.output;
  EXPECT_TRUE(contains(code.output, "generated source")) << code.output;
  EXPECT_FALSE(contains(code.output, "compiled into")) << code.output;
}

}  // namespace
}  // namespace gbc
