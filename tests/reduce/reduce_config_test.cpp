// Tests of configs/reduce.yaml's reader (harness/reduce/reduce_config.h): the shipped schedule
// runs every reduction pass in the reducer's order, a partial file changes only the keys it names
// (a schedule it names replaces the whole one), and a config made in code is checked too. The
// reducer following a schedule: tests/reduce/reducer_test.cpp; error messages:
// tests/harness/config_files_test.cpp.
#include "harness/reduce/reduce_config.h"

#include <gtest/gtest.h>

#include "harness/reduce/reducer.h"

namespace gbc {
namespace {

TEST(ReduceConfig, TheShippedScheduleRunsEveryPassInTheReducersOrder) {
  const ReduceConfig config = load_reduce_config();
  EXPECT_EQ(config.schedule, reduction_pass_names());
  EXPECT_TRUE(reduce_config_problems(config).empty());
}

TEST(ReduceConfig, APartialFileChangesOnlyTheKeysItNames) {
  const ReduceConfig defaults = load_reduce_config();
  ReduceConfig c = defaults;
  read_reduce_config("values: {max_parts: 4}\n", "partial.yaml", false, c);
  EXPECT_EQ(c.schedule, defaults.schedule);
  EXPECT_EQ(c.values.small_tensor, defaults.values.small_tensor);
  EXPECT_EQ(c.values.max_parts, 4);
  EXPECT_EQ(c.replay_cases, defaults.replay_cases);
  read_reduce_config("schedule: [simplify_values, remove_nodes]\nreplay_cases: 0\n", "partial.yaml", false, c);
  EXPECT_EQ(c.schedule, (std::vector<std::string>{"simplify_values", "remove_nodes"}));
  EXPECT_EQ(c.replay_cases, 0);
  EXPECT_EQ(c.values.max_parts, 4);
}

TEST(ReduceConfig, AConfigMadeInCodeIsCheckedToo) {
  ReduceConfig c = load_reduce_config();
  c.schedule = {"remove_nodes", "remove_node"};
  std::vector<ConfigProblem> problems = reduce_config_problems(c);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].keys.front(), "schedule.1");
  EXPECT_NE(problems[0].message.find("did you mean 'remove_nodes'?"), std::string::npos) << problems[0].message;
  EXPECT_FALSE(reduce_config_problems(ReduceConfig{}).empty());
}

}  // namespace
}  // namespace gbc
