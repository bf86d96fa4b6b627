// Tests of configs/fuzz.yaml's reader (harness/fuzz/fuzz_config.h) and of gbcheck-gen's
// --fuzz-config: a partial file changes only the keys it names, the written form reads back into
// the same config, every tunable key reaches the generator, and the command line takes a file on
// top of the defaults. Error messages: tests/harness/config_files_test.cpp.
#include "harness/fuzz/fuzz_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "compiler/ir/yaml_reader.h"
#include "compiler/support/hash.h"
#include "harness/fuzz/graph_generator.h"
#include "harness/model/model_loader.h"
#include "harness/model/model_writer.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

std::string graphs_hash(const GeneratorConfig& c, int seeds) {
  std::string all;
  for (int s = 0; s < seeds; ++s) all += write_model_yaml(generate_model(static_cast<uint64_t>(s), c));
  return content_hash(all);
}

TEST(FuzzConfig, APartialFileChangesOnlyTheKeysItNames) {
  const FuzzConfig defaults = load_fuzz_config();
  FuzzConfig read = defaults;
  read_fuzz_config("generator:\n  max_nodes: 40\n  op_weights: {matmul: 3, print: 0}\n"
                   "  input_values: {constant: 0.5}\ncampaign:\n  graph_cases: 2\n",
                   "partial.yaml", false, read);
  FuzzConfig expected = defaults;
  expected.generator.max_nodes = 40;
  expected.generator.op_weights["matmul"] = 3;
  expected.generator.op_weights["print"] = 0;
  expected.generator.input_values.constant = 0.5;
  expected.campaign.graph_cases = 2;
  EXPECT_EQ(write_fuzz_config(read), write_fuzz_config(expected));
  EXPECT_NE(write_fuzz_config(read), write_fuzz_config(defaults));
  EXPECT_EQ(read.loc_of("generator.max_nodes").str(), "partial.yaml:2:14");
  EXPECT_EQ(read.loc_of("generator.min_nodes").file, defaults.loc_of("generator.min_nodes").file);
  // An empty file changes nothing.
  FuzzConfig empty = defaults;
  read_fuzz_config("# nothing\n", "empty.yaml", false, empty);
  EXPECT_EQ(write_fuzz_config(empty), write_fuzz_config(defaults));
}

TEST(FuzzConfig, TheWrittenConfigReadsBackTheSame) {
  FuzzConfig config = load_fuzz_config();
  config.generator.rank_weights[3] = 0.1 + 0.2;  // a number with no short decimal form
  config.generator.dtypes = {DType::BFloat16, DType::Int8};
  config.generator.backends = {"gbc", "nnc"};
  const std::string text = write_fuzz_config(config);
  FuzzConfig back;
  read_fuzz_config(text, "written.yaml", true, back);
  EXPECT_EQ(write_fuzz_config(back), text);
  EXPECT_EQ(back.generator.rank_weights[3], 0.1 + 0.2);
  EXPECT_EQ(graphs_hash(back.generator, 5), graphs_hash(config.generator, 5));
}

// Each tunable key reaches the generator: moving it changes the graphs of a few seeds.
TEST(FuzzConfig, EveryTunableKeyChangesTheGraphs) {
  const GeneratorConfig defaults = default_generator_config();
  const std::string base = graphs_hash(defaults, 12);
  std::vector<std::pair<std::string, std::function<void(GeneratorConfig&)>>> changes = {
      {"main_dtype_rate", [](GeneratorConfig& c) { c.main_dtype_rate = 0; }},
      {"rank_weights", [](GeneratorConfig& c) { c.rank_weights = {0, 1, 0, 0, 0, 0, 0, 0, 0}; }},
      {"symbolic_dim_rate", [](GeneratorConfig& c) { c.symbolic_dim_rate = 0; }},
      {"size_one_rate", [](GeneratorConfig& c) { c.size_one_rate = 0; }},
      {"reuse_rate", [](GeneratorConfig& c) { c.reuse_rate = 0; }},
      {"prefer_unused_rate", [](GeneratorConfig& c) { c.prefer_unused_rate = 0; }},
      {"input_values", [](GeneratorConfig& c) { c.input_values = {0, 0, 1, 0}; }},
  };
  for (const auto& [key, change] : changes) {
    GeneratorConfig c = defaults;
    change(c);
    EXPECT_NE(graphs_hash(c, 12), base) << key << " changes nothing";
  }
}

// Only integers in [-4, 4], or only the constant 1.5, for float inputs that need no domain.
TEST(FuzzConfig, InputValueWeightsChooseTheDistributions) {
  auto dists = [](const InputValueWeights& w) {
    GeneratorConfig c = default_generator_config();
    c.input_values = w;
    std::set<std::string> seen;
    for (uint64_t seed = 0; seed < 100; ++seed) {
      Model m = generate_model(seed, c);
      for (const TensorSpec& s : m.inputs)
        if (is_floating(s.dtype)) seen.insert(s.dist.str());
    }
    return seen;
  };
  const std::string ints = ValueDist{ValueDist::Kind::Int, -4, 4, true}.str();
  const std::string constant = ValueDist{ValueDist::Kind::Const, 1.5, 0, true}.str();
  std::set<std::string> only_ints = dists({0, 0, 1, 0});
  EXPECT_TRUE(only_ints.count(ints));
  EXPECT_FALSE(only_ints.count(constant));
  std::set<std::string> only_constant = dists({0, 0, 0, 1});
  EXPECT_TRUE(only_constant.count(constant));
  EXPECT_FALSE(only_constant.count(ints));
}

// gbcheck-gen: the defaults, a --fuzz-config file on top, options on top of that.
class GenCommand : public ::testing::Test {
 protected:
  // Runs gbcheck-gen ARGS with the environment assignments ENV; returns its exit code, its stdout
  // and stderr in out_.
  int gen(const std::string& args, const std::string& env = "") {
    testing::CommandResult r = testing::run_command(env + " " + testing::built_binary("gbcheck-gen") + " " + args);
    out_ = r.output;
    return r.exit_code;
  }
  std::string file(const std::string& name, const std::string& text) { return tmp_.file(name, text); }

  testing::TempDir tmp_{"gen-config-test"};
  const fs::path dir_ = tmp_.root();
  std::string out_;
};

TEST_F(GenCommand, AFuzzConfigFileOverridesTheDefaultsAndOptionsOverrideIt) {
  const std::string config = file("small.yaml", "generator:\n  min_nodes: 2\n  max_nodes: 3\n  cases: 3\n  device: cuda\n");
  ASSERT_EQ(gen("--out " + (dir_ / "a").string() + " --count 5 --fuzz-config " + config + " --cases 2"), 0) << out_;
  for (int seed = 0; seed < 5; ++seed) {
    const std::string path = (dir_ / "a" / ("gen_" + std::to_string(seed) + ".yaml")).string();
    Model m = load_model_file(path);
    EXPECT_LE(m.graph.node_count(), 3u) << path;
    EXPECT_EQ(m.check.device, "cuda") << path;  // from the file
    EXPECT_EQ(m.check.cases, 2) << path;        // the option wins over the file
    // The header's replay command names the file, so that it regenerates the same graph.
    EXPECT_NE(read_text_file(path)->find("--fuzz-config " + config), std::string::npos);
  }
  // Without the file: the defaults' graphs, as generate_model makes them.
  ASSERT_EQ(gen("--out " + (dir_ / "b").string() + " --count 2"), 0) << out_;
  Model m = load_model_file((dir_ / "b" / "gen_1.yaml").string());
  EXPECT_EQ(write_model_yaml(m), write_model_yaml(generate_model(1, default_generator_config())));
}

TEST_F(GenCommand, AnInvalidFuzzConfigExitsTwoWithItsLocation) {
  const std::string config = file("bad.yaml", "generator:\n  max_rank: 12\n");
  EXPECT_EQ(gen("--out " + (dir_ / "c").string() + " --fuzz-config " + config), 2);
  EXPECT_EQ(out_, config + ":2:13: error: generator.max_rank must be in [1, 8], got 12\n");
  EXPECT_FALSE(fs::exists(dir_ / "c"));
  EXPECT_EQ(gen("--out " + (dir_ / "c").string() + " --fuzz-config " + (dir_ / "missing.yaml").string()), 2);
  EXPECT_EQ(out_, (dir_ / "missing.yaml").string() + ": error: cannot read the config file; hint: check the path\n");
  // configs/ missing: an unusable environment.
  EXPECT_EQ(gen("--out " + (dir_ / "c").string(), "GBCHECK_CONFIG_DIR=" + dir_.string()), 4);
  EXPECT_NE(out_.find("config file " + (dir_ / "fuzz.yaml").string() + " not found"), std::string::npos) << out_;
}

}  // namespace
}  // namespace gbc
