// The config files from the command line (docs/configs.md): `gbcheck fuzz --fuzz-config`,
// `gbcheck reduce --reduce-config` and `gbcheck check --tolerances-config` take a file's keys on
// top of configs/, report a bad file at its file:line:col with exit code 2, and a missing
// configs/ with exit code 4; --disable-pass takes only the names of passes that exist. Runs the
// built gbcheck as a user would.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "compiler/ir/yaml_reader.h"
#include "harness/store/fuzz_store.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

class ConfigFlags : public ::testing::Test {
 protected:
  // Runs `gbcheck ARGS` in the source tree (paths in messages as a user types them).
  testing::CommandResult gbcheck(const std::string& args, const std::string& env = "") {
    return testing::run_gbcheck_in_source_tree(args, env);
  }
  std::string file(const std::string& name, const std::string& text) { return tmp_.file(name, text); }
  std::string path(const std::string& name) const { return tmp_.path(name); }

  testing::TempDir tmp_{"config-flags-test"};
};

TEST_F(ConfigFlags, FuzzTakesAFuzzConfigOnTopOfTheDefaults) {
  const std::string config = file("small.yaml",
                                  "generator:\n  min_nodes: 2\n  max_nodes: 4\n  allow_breaks: false\n"
                                  "campaign:\n  backends: [gbc-interp]\n  graph_cases: 1\n");
  testing::CommandResult r =
      gbcheck("fuzz --out " + path("run") + " --fuzz-config " + config + " --cases 3 --reduce-checks 0 --quiet");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  FuzzStore store(path("run") + "/" + FuzzStore::kFileName, false);
  ASSERT_EQ(store.runs().size(), 1u);
  const RunInfo run = store.runs()[0];
  EXPECT_EQ(run.backends, "gbc-interp");
  EXPECT_NE(run.gen_args.find("--fuzz-config " + config + " "), std::string::npos) << run.gen_args;
  EXPECT_NE(run.gen_args.find("--max-nodes 4 --cases 1"), std::string::npos) << run.gen_args;
  // The whole generator section is stored, so that --resume regenerates the same graphs.
  const std::string stored = nlohmann::json::parse(run.options).at("generator_config").get<std::string>();
  EXPECT_NE(stored.find("  max_nodes: 4\n"), std::string::npos) << stored;
  EXPECT_NE(stored.find("  allow_breaks: false\n"), std::string::npos) << stored;
  EXPECT_EQ(store.counts().cases, 3);
}

TEST_F(ConfigFlags, FuzzReportsABadFuzzConfigAtItsLocation) {
  const std::string bad = file("bad.yaml", "generator:\n  max_nodes: 3\n  min_nodes: 4\n");
  testing::CommandResult r = gbcheck("fuzz --out " + path("a") + " --fuzz-config " + bad);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output, bad + ":2:14: error: generator.max_nodes (3) is below min_nodes (4)\n");
  EXPECT_FALSE(fs::exists(path("a")));
  // A backend only the campaign knows is unknown: named at the list in the file.
  const std::string backend = file("backend.yaml", "campaign:\n  backends: [gbc, gbcc]\n");
  r = gbcheck("fuzz --out " + path("a") + " --fuzz-config " + backend);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output, backend + ":2:13: error: unknown backend 'gbcc'; hint: `gbcheck check --help` lists the backends\n");
}

TEST_F(ConfigFlags, AMissingConfigFolderIsAnUnusableEnvironment) {
  testing::CommandResult r = gbcheck("fuzz --out " + path("a") + " --cases 1", "GBCHECK_CONFIG_DIR=" + path("none"));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("config file " + path("none") + "/fuzz.yaml not found (GBCHECK_CONFIG_DIR is " + path("none")),
            std::string::npos)
      << r.output;
  r = gbcheck("corpus/examples/mlp.yaml -b gbc -n 1", "GBCHECK_CONFIG_DIR=" + path("none"));
  EXPECT_EQ(r.exit_code, 4) << r.output;
  // A check reads configs/tolerances.yaml first, as it loads the model.
  EXPECT_NE(r.output.find("tolerances.yaml not found"), std::string::npos) << r.output;
}

// corpus/faults/const.yaml fails on gbc-interp with --inject-fault const; the reducer takes it
// from 2 nodes to 1 with the shipped schedule, and keeps both with a schedule of values only.
TEST_F(ConfigFlags, ReduceFollowsTheScheduleOfItsReduceConfig) {
  const std::string base = "reduce corpus/faults/const.yaml -b gbc-interp --inject-fault const --max-checks 200 ";
  auto nodes_after = [&](const std::string& extra, const std::string& name) {
    testing::CommandResult r = gbcheck(base + "--out " + path(name) + " --json " + path(name + ".json") + " " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return nlohmann::json::parse(*read_text_file(path(name + ".json"))).at("nodes_after").get<int>();
  };
  EXPECT_EQ(nodes_after("", "shipped"), 1);
  const std::string values_only = file("values.yaml", "schedule: [simplify_values]\n");
  EXPECT_EQ(nodes_after("--reduce-config " + values_only, "values"), 2);

  const std::string bad = file("bad.yaml", "schedule: [remove_nodes, shrink_dim]\n");
  testing::CommandResult r = gbcheck(base + "--reduce-config " + bad);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output, bad + ":1:26: error: schedule names unknown pass 'shrink_dim' (did you mean 'shrink_dims'? passes: "
                            "remove_outputs, remove_nodes, lift_outputs, contiguous_inputs, shrink_dims, simplify_dtypes, "
                            "simplify_attributes, simplify_values)\n");
}

TEST_F(ConfigFlags, DisablePassTakesOnlyPassesThatExist) {
  testing::CommandResult r = gbcheck("corpus/examples/mlp.yaml -b gbc -n 1 --disable-pass cse2");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output,
            "command line: error: --disable-pass: unknown pass 'cse2'; hint: did you mean 'cse'? passes: functionalize, "
            "fold_conv_bn, decompose, constant_fold, cse, dce, fuse, fold_params\n");
  r = gbcheck("corpus/examples/mlp.yaml -b gbc -n 1 -q --disable-pass cse --disable-pass fuse");
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

// --tolerances-config sets the presets of one run over configs/tolerances.yaml: with the
// fp16-accum fault the float16 sum y and the float32 sum y32 are far off; a file that loosens
// float16 alone lets y pass and not y32, one that loosens both passes. A bad file stops the check
// before anything runs, at its file:line:col.
TEST_F(ConfigFlags, ATolerancesConfigSetsThePresetsOfOneRun) {
  const std::string base = "corpus/faults/fp16-accum.yaml -b gbc-interp --inject-fault fp16-accum -n 1 ";
  testing::CommandResult shipped = gbcheck(base);
  EXPECT_EQ(shipped.exit_code, 1) << shipped.output;
  EXPECT_NE(shipped.output.find("output y ["), std::string::npos) << shipped.output;
  const std::string half = file("half.yaml", "float16: {atol: 1.0e+6}\n");
  testing::CommandResult loose_half = gbcheck(base + "--tolerances-config " + half);
  EXPECT_EQ(loose_half.exit_code, 1) << loose_half.output;
  EXPECT_EQ(loose_half.output.find("output y ["), std::string::npos) << loose_half.output;
  EXPECT_NE(loose_half.output.find("output y32 ["), std::string::npos) << loose_half.output;
  const std::string both = file("both.yaml", "float16: {atol: 1.0e+6}\nfloat32: {atol: 1.0e+6}\n");
  EXPECT_EQ(gbcheck(base + "-q --tolerances-config " + both).exit_code, 0);

  const std::string bad = file("bad.yaml", "float32: {rtol: -1}\n");
  testing::CommandResult r = gbcheck("corpus/examples/mlp.yaml -b gbc -n 1 --tolerances-config " + bad);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(r.output, bad + ":1:17: error: float32.rtol must be a finite number >= 0, got -1\n");
  r = gbcheck("corpus/examples/mlp.yaml -b gbc -n 1 --tolerances-config " + path("none.yaml"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(path("none.yaml")), std::string::npos) << r.output;
}

TEST_F(ConfigFlags, HelpNamesTheConfigFlags) {
  EXPECT_NE(gbcheck("fuzz --help").output.find("--fuzz-config"), std::string::npos);
  EXPECT_NE(gbcheck("reduce --help").output.find("--reduce-config"), std::string::npos);
  EXPECT_NE(gbcheck("check --help").output.find("--tolerances-config"), std::string::npos);
}

}  // namespace
}  // namespace gbc
