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

}  // namespace
}  // namespace gbc
