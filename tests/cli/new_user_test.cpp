// What a new user hit (issue 15), run as a user runs it: the built gbcheck on the example models.
// Each test is a defect that gave a wrong answer, a false pass or an unhelpful message: options
// and environment variables validated as strictly as their siblings, --json checked before the
// run, a crash still writing its report, stores not left behind by failed merges.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "compiler/aten/torch_environment.h"
#include "compiler/ir/op_schema.h"
#include "harness/cli/tolerance_args.h"
#include "harness/model/model_loader.h"
#include "harness/model/tolerance_presets.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

class NewUser : public ::testing::Test {
 protected:
  // Runs `gbcheck ARGS` in the source tree (paths in messages as a user types them).
  testing::CommandResult gbcheck(const std::string& args, const std::string& env = "") {
    return testing::run_gbcheck_in_source_tree(args, env);
  }
  std::string file(const std::string& name, const std::string& text) { return tmp_.file(name, text); }
  std::string path(const std::string& name) const { return tmp_.path(name); }
  static bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

  testing::TempDir tmp_{"new-user-test"};
};

// A bug report starts with `gbcheck --version`: it names the LibTorch gbcheck runs on and whether
// that LibTorch sees a GPU (compiler/aten/torch_environment.h, so the CLI needs no ATen header).
TEST_F(NewUser, VersionNamesTheLibTorchAndWhetherItSeesAGpu) {
  testing::CommandResult r = gbcheck("--version");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  const std::string want =
      "(LibTorch " + torch_version() + ", CUDA " + (torch_has_cuda() ? "available" : "not available") + ")";
  EXPECT_TRUE(contains(r.output, want)) << r.output;
  EXPECT_EQ(torch_version().substr(0, 1).find_first_of("0123456789"), 0u) << torch_version();
}

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
  r = gbcheck("corpus/examples/mlp.yaml -n -1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "'-1' is out of range: expected a whole number from 0 to 2147483647")) << r.output;
  EXPECT_LT(r.output.size(), 300u) << r.output;
  // -n 0 checks only the user's own inputs (--inputs): without any it is an error.
  r = gbcheck("corpus/examples/mlp.yaml -n 0");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--cases 0 checks only the inputs given with --inputs, and there are none")) << r.output;
  r = gbcheck("bench corpus/examples/mlp.yaml --inputs x.pt");  // only check has --inputs
  EXPECT_EQ(r.exit_code, 2) << r.output;
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
  for (const std::string cmd : {"corpus/examples/mlp.yaml", "explain corpus/examples/mlp.yaml",
                                "bench corpus/examples/mlp.yaml", "bisect corpus/examples/mlp.yaml"}) {
    testing::CommandResult r = gbcheck(cmd + " --json " + path("no/such/folder/r.json"));
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "cannot write " + path("no/such/folder/r.json") + ": no folder")) << r.output;
    EXPECT_FALSE(contains(r.output, "result:")) << cmd << ": ran before rejecting the path\n" << r.output;
  }
  testing::CommandResult r = gbcheck("corpus/examples/mlp.yaml -n 1 -q --json " + path("r.json"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(path("r.json")));
  // The folders a run writes into are checked the same way.
  const std::string not_a_folder = file("plain.txt", "x") + "/out";
  for (const std::string cmd : {"corpus/examples/mlp.yaml --plots ", "reduce corpus/examples/mlp.yaml --out ",
                                "repro corpus/examples/mlp.yaml --out ", "fuzz --out "}) {
    r = gbcheck(cmd + not_a_folder);
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "cannot write into " + not_a_folder + ": " + path("plain.txt") + " is not a folder"))
        << r.output;
  }
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
  EXPECT_TRUE(contains(r.output,
                       "unknown command 'bogus-command' (commands: check, import, ops, explain, bench, reduce, cache, "
                       "bisect, fuzz, db, backends, repro, report; or give a model file: gbcheck MODEL.yaml)"))
      << r.output;
  r = gbcheck("--bogus");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown option '--bogus' for `gbcheck check`")) << r.output;
  r = gbcheck("corpus/examples/mlp.yaml --sed 3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown option '--sed' for `gbcheck check`; did you mean '--seed'?")) << r.output;
  r = gbcheck("cache");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "`gbcheck cache` needs one of:\n  gbcheck cache info: ")) << r.output;
  EXPECT_TRUE(contains(r.output, "\n  gbcheck cache clear: ")) << r.output;
  r = gbcheck("corpus/found");  // a folder of model folders: check takes a folder's own *.yaml files
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "gbcheck: corpus/found holds no model (*.yaml) to check: a folder stands for the *.yaml "
                                 "files directly in it, not for those of its subfolders\n"))
      << r.output;
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

// --rtol/--atol as Polygraphy takes them: X, DTYPE:X, OUTPUT:X; the most specific wins and each
// sets only its own field over the model's check: section.
TEST(ToleranceArgs, MostSpecificWinsAndTheOtherFieldStays) {
  const std::string text =
      "format: gbcheck/v1\ninputs:\n  x: {shape: [4], dtype: float32}\ngraph:\n"
      "  - {id: y, op: tanh, args: [x]}\n  - {id: z, op: sin, args: [x]}\noutputs: [y, z]\n"
      "check:\n  tolerance: {y: {rtol: 0.5, atol: 0.25}}\n";
  const Tolerance f32 = default_tolerance(DType::Float32);
  Model m = load_model_text(text, "t.yaml");
  ToleranceArgs args;
  args.rtol = {"1e-3"};
  ASSERT_EQ(args.apply(m), "");
  EXPECT_EQ(m.check.tolerance_for(DType::Float32, "z").rtol, 1e-3);
  EXPECT_EQ(m.check.tolerance_for(DType::Float32, "z").atol, f32.atol);
  EXPECT_EQ(m.check.tolerance_for(DType::Float32, "y").rtol, 1e-3);  // over the model's own entry
  EXPECT_EQ(m.check.tolerance_for(DType::Float32, "y").atol, 0.25);
  EXPECT_EQ(m.check.tolerance_for(DType::Float16, "").rtol, 1e-3);

  m = load_model_text(text, "t.yaml");
  args.rtol = {"z:0.125", "float32:0.01", "1e-3"};
  args.atol = {"z:2"};
  ASSERT_EQ(args.apply(m), "");
  EXPECT_EQ(m.check.tolerance_for(DType::Float32, "z").rtol, 0.125);
  EXPECT_EQ(m.check.tolerance_for(DType::Float32, "z").atol, 2.0);
  EXPECT_EQ(m.check.tolerance_for(DType::Float32, "y").rtol, 0.01);
  EXPECT_EQ(m.check.tolerance_for(DType::Float16, "").rtol, 1e-3);

  args = ToleranceArgs{};
  args.rtol = {"w:1"};
  EXPECT_EQ(args.apply(m), "--rtol w:1: 'w' is neither an output (y, z) nor a dtype");
  args.rtol = {"y:-1"};
  EXPECT_EQ(args.apply(m), "--rtol y:-1: expected a number >= 0, as X, DTYPE:X or OUTPUT:X");
  args = ToleranceArgs{};
  args.error_stat = "quantile:0.9";
  ASSERT_EQ(args.apply(m), "");
  EXPECT_EQ(m.check.error_stat, "quantile");
  EXPECT_EQ(m.check.quantile, 0.9);
  args.error_stat = "median";
  EXPECT_EQ(args.apply(m), "--error-stat median: expected elementwise, max, mean, quantile or quantile:Q");
}

TEST_F(NewUser, ToleranceOptionsReachTheCheck) {
  testing::CommandResult r = gbcheck("corpus/examples/mlp.yaml -n 1 -q --rtol nope:1");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "command line: error: --rtol nope:1: 'nope' is neither an output")) << r.output;
  r = gbcheck("corpus/examples/mlp.yaml -n 1 -q --error-stat max --json " + path("r.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(path("r.json"));
  EXPECT_EQ(nlohmann::json::parse(in).at("error_stat"), "max");
}

// `gbcheck ops --json`: the op table for tools, one entry per op of the schema table.
TEST_F(NewUser, OpsListAsJson) {
  testing::CommandResult r = gbcheck("ops --json 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j.at("schema"), "gbcheck.ops/v1");
  EXPECT_EQ(j.at("ops").size(), all_op_schemas().size());
  bool found = false;
  for (const auto& op : j.at("ops"))
    if (op.at("name") == "sum") {
      found = true;
      EXPECT_FALSE(op.at("attrs").empty()) << op.dump();
    }
  EXPECT_TRUE(found);
}

// docs/model-format.md promises the model's print output with -v; it once reached only the JSON.
TEST_F(NewUser, VerboseCheckShowsThePrintOutput) {
  const std::string model = file("printing.yaml",
                                 "format: gbcheck/v1\ninputs:\n  x: {shape: [2], dtype: float32}\ngraph:\n"
                                 "  - {id: a, op: relu, args: [x]}\n  - {op: print, args: [a], message: hello from print}\n"
                                 "  - {id: y, op: exp, args: [a]}\noutputs: [y]\ncheck: {cases: 1, backends: [nnc]}\n");
  testing::CommandResult r = gbcheck(model + " -v");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "print output (eager reference):\n  hello from print")) << r.output;
  r = gbcheck(model);
  EXPECT_FALSE(contains(r.output, "hello from print")) << r.output;
}

}  // namespace
}  // namespace gbc
