// The user's own inputs (harness/inputs/user_inputs.h, saved_cases.h) and check's --inputs,
// --save-inputs and --save-outputs: a save -> load round trip, a torch.save file written by
// /usr/bin/python3 now, reduce's inputs.json, each error, and a check that finds a divergence only
// the user's values reach (a NaN, which generated cases never hold with special_values 0); a
// "layout" key in inputs.json or a manifest rebuilds the view; reduce, repro and bisect run on the
// user's cases as check numbers them.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "compiler/ir/diagnostics.h"
#include "harness/inputs/input_generator.h"
#include "harness/inputs/saved_cases.h"
#include "harness/inputs/tensor_files.h"
#include "harness/inputs/user_inputs.h"
#include "harness/model/model_loader.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace gbc {
namespace {

// amax of a row: gbc built with --inject-fault nan-drop drops NaN there, which only a NaN input shows.
const char* kModel = R"(format: gbcheck/v1
name: rowmax
dims: {B: [1, 4]}
inputs:
  x: {shape: [B, 8], dtype: float32}
  w: {shape: [8], dtype: float32}
graph:
  - {id: h, op: mul, args: [x, w]}
  - {id: y, op: amax, args: [h], dim: 1}
outputs: [y]
)";

class UserInputs : public ::testing::Test {
 protected:
  UserInputs() : dir_("user-inputs"), model_(load_model_text(kModel, "rowmax.yaml")) {}
  std::string error_of(const std::string& path) {
    try {
      load_given_cases(model_, {path});
    } catch (const ModelError& e) {
      return e.what();
    }
    return "";
  }
  // Writes FILE with torch.save(EXPR) from Debian's PyTorch; false when it has none.
  // Writes each FILE with torch.save(EXPR) in one Python (a start imports torch: about 2 s); false
  // when that Python has no torch.
  bool torch_save(const std::vector<std::pair<std::string, std::string>>& files) {
    std::string saves;
    for (const auto& [file, expr] : files) saves += "; torch.save(" + expr + ", '" + dir_.path(file) + "')";
    const testing::CommandResult r = testing::run_command(
        "/usr/bin/python3 -c \"import torch; x = torch.arange(16.).reshape(2, 8); w = torch.ones(8)" + saves + "\"");
    if (r.exit_code != 0 && r.output.find("No module named 'torch'") != std::string::npos) return false;
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return true;
  }
  bool torch_save(const std::string& file, const std::string& expr) { return torch_save({{file, expr}}); }
  testing::TempDir dir_;
  Model model_;
};

TEST_F(UserInputs, SavedCaseReadsBack) {
  const at::Tensor x = at::randn({3, 8}), w = at::rand({8});
  save_case_folder(dir_.path("saved"), 7, "inputs", {{"w", w}, {"x", x}});
  const std::vector<GivenCase> one = load_given_cases(model_, {dir_.path("saved/case-7")});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_TRUE(at::equal(one[0].inputs[0], x));  // matched by name, in the model's order
  EXPECT_TRUE(at::equal(one[0].inputs[1], w));
  EXPECT_EQ(one[0].dims.at("B"), 3);
  save_case_folder(dir_.path("saved"), 2, "inputs", {{"x", x.slice(0, 0, 1)}, {"w", w}});
  const std::vector<GivenCase> all = load_given_cases(model_, {dir_.path("saved")});
  ASSERT_EQ(all.size(), 2u);  // case-2, then case-7
  EXPECT_EQ(all[0].inputs[0].size(0), 1);
  EXPECT_EQ(all[1].inputs[0].size(0), 3);
  // Nothing temporary stays behind.
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_.path("saved"))) entries += e.is_directory();
  EXPECT_EQ(entries, 2);
}

TEST_F(UserInputs, ReducesInputsJson) {
  const std::string file = dir_.file("inputs.json", R"({"x": {"dtype": "float32", "shape": [1, 8], "values": [1, 2, 3, "nan", 5, 6, 7, "-inf"]},
                                                        "w": {"dtype": "float32", "shape": [8], "values": [1, 1, 1, 1, 1, 1, 1, 2]}})");
  const std::vector<GivenCase> c = load_given_cases(model_, {file});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_TRUE(std::isnan(c[0].inputs[0][0][3].item<float>()));
  EXPECT_EQ(c[0].inputs[0][0][7].item<float>(), -INFINITY);
  EXPECT_EQ(c[0].inputs[1][7].item<float>(), 2.0f);
}

// reduce's inputs.json holds the failing case's params too: their values replace the drawn ones,
// so the reduced model replays with exactly the values that failed; a param of the wrong shape is
// an error naming it.
TEST_F(UserInputs, ANamedParamReplacesTheDrawnOne) {
  const Model with_param = load_model_text(R"(format: gbcheck/v1
name: scaled
inputs:
  x: {shape: [4], dtype: float64}
params:
  p: {shape: [4], dtype: float64}
graph:
  - {id: y, op: mul, args: [x, p]}
outputs: [y]
)", "scaled.yaml");
  const std::string file = dir_.file("params.json", R"({"x": {"dtype": "float64", "shape": [4], "values": [1, 2, 3, 4]},
                                                        "p": {"dtype": "float64", "shape": [4], "values": [0, -1e300, 0.5, 7]}})");
  const std::vector<GivenCase> c = load_given_cases(with_param, {file});
  ASSERT_EQ(c.size(), 1u);
  ASSERT_EQ(c[0].params.size(), 1u);
  const TestCase tc = InputGenerator(with_param, c10::Device(c10::kCPU)).run_case(0, 0, c, {});
  ASSERT_EQ(tc.tensors.size(), 2u);  // x, then p
  EXPECT_EQ(tc.tensors[1][1].item<double>(), -1e300);
  EXPECT_EQ(tc.tensors[1][3].item<double>(), 7.0);
  // Without p in the file, p is drawn as before.
  const std::string only_x = dir_.file("x.json", R"({"x": {"dtype": "float64", "shape": [4], "values": [1, 2, 3, 4]}})");
  const TestCase drawn = InputGenerator(with_param, c10::Device(c10::kCPU)).run_case(0, 0, load_given_cases(with_param, {only_x}), {});
  EXPECT_NE(drawn.tensors[1][1].item<double>(), -1e300);
  const std::string wrong = dir_.file("wrong.json", R"({"x": {"dtype": "float64", "shape": [4], "values": [1, 2, 3, 4]},
                                                       "p": {"dtype": "float64", "shape": [2], "values": [0, 1]}})");
  try {
    load_given_cases(with_param, {wrong});
    ADD_FAILURE() << "no error";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("param 'p': float64[2], the model takes float64[4]"), std::string::npos) << e.what();
  }
}

// An input with a `dtypes:` list takes each of its dtypes: a fuzz run's reducer saves the failing
// case's inputs.json in the dtype the case drew (seed 7600223: x2 float32 with dtypes [float32,
// float64], saved as float64), and replaying it must not fail on the dtype.
TEST_F(UserInputs, AnInputWithADtypesListTakesEachOfThem) {
  const Model varied = load_model_text(R"(format: gbcheck/v1
name: varied
inputs:
  x: {shape: [2], dtype: float32, dtypes: [float32, float64]}
graph:
  - {id: y, op: neg, args: [x]}
outputs: [y]
)", "varied.yaml");
  const std::string wide = dir_.file("wide.json", R"({"x": {"dtype": "float64", "shape": [2], "values": [1e300, -2]}})");
  const std::vector<GivenCase> c = load_given_cases(varied, {wide});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].inputs[0].scalar_type(), at::kDouble);
  EXPECT_NE(c[0].descriptions[0].find("x: float64[2]"), std::string::npos) << c[0].descriptions[0];
  const std::string narrow = dir_.file("narrow.json", R"({"x": {"dtype": "int32", "shape": [2], "values": [1, 2]}})");
  try {
    load_given_cases(varied, {narrow});
    ADD_FAILURE() << "no error";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x': dtype int32, the model takes float32 or float64"), std::string::npos) << e.what();
  }
}

// An entry's "layout" rebuilds the view the failure had; one that does not fit is an error.
TEST_F(UserInputs, InputsJsonAndManifestKeepALayout) {
  const std::string file = dir_.file("view.json", R"({"x": {"dtype": "float32", "shape": [2, 8], "layout": "expanded", "dim": 0,
                                                          "values": [1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 8]},
                                                    "w": {"dtype": "float32", "shape": [8], "layout": "sliced", "dim": 0,
                                                          "values": [1, 1, 1, 1, 1, 1, 1, 2]}})");
  const std::vector<GivenCase> c = load_given_cases(model_, {file});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].inputs[0].stride(0), 0);
  EXPECT_EQ(c[0].inputs[0][1][7].item<float>(), 8.0f);
  EXPECT_EQ(c[0].inputs[1].stride(0), 2);
  EXPECT_EQ(c[0].inputs[1][7].item<float>(), 2.0f);
  const std::string unequal = dir_.file("unequal.json", R"({"x": {"dtype": "float32", "shape": [2, 8], "layout": "expanded", "dim": 0,
                                                              "values": [1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 7, 9]},
                                                        "w": {"dtype": "float32", "shape": [8], "values": [1, 1, 1, 1, 1, 1, 1, 2]}})");
  EXPECT_NE(error_of(unequal).find("input 'x': error: layout \"expanded\" along dim 0 does not fit these values"), std::string::npos)
      << error_of(unequal);
  const std::string unknown = dir_.file("unknown.json", R"({"x": {"dtype": "float32", "shape": [1, 8], "layout": "diagonal",
                                                              "values": [1, 2, 3, 4, 5, 6, 7, 8]}})");
  EXPECT_NE(error_of(unknown).find("unknown layout \"diagonal\""), std::string::npos) << error_of(unknown);
  // A repro/--save-inputs folder keeps it too.
  const at::Tensor t = at::arange(16, at::kFloat).reshape({8, 2}).t();
  save_case_folder(dir_.path("views"), 0, "inputs", {{"x", t}, {"w", at::ones({1}).expand({8})}});
  const std::vector<GivenCase> saved = load_given_cases(model_, {dir_.path("views/case-0")});
  ASSERT_EQ(saved.size(), 1u);
  EXPECT_EQ(saved[0].inputs[0].strides(), t.strides());
  EXPECT_TRUE(at::equal(saved[0].inputs[0], t));
  EXPECT_EQ(saved[0].inputs[1].stride(0), 0);
}

TEST_F(UserInputs, TorchSaveTupleAndDict) {
  if (!torch_save({{"tuple.pt", "(x, w)"}, {"dict.pt", "{'w': w * 2, 'x': x}"}}))
    GTEST_SKIP() << "/usr/bin/python3 has no torch (python3-torch)";
  const std::vector<GivenCase> c = load_given_cases(model_, {dir_.path("tuple.pt"), dir_.path("dict.pt")});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_TRUE(at::equal(c[0].inputs[0], at::arange(16, at::kFloat).reshape({2, 8})));
  EXPECT_EQ(c[1].inputs[1][0].item<float>(), 2.0f);  // by name, not position
  EXPECT_EQ(c[1].dims.at("B"), 2);
}

TEST_F(UserInputs, EachErrorNamesTheInput) {
  if (!torch_save({{"dtype.pt", "(x.double(), w)"},
                   {"shape.pt", "(x[:, :7], w)"},
                   {"range.pt", "(torch.ones(5, 8), w)"},
                   {"count.pt", "(x,)"},
                   {"names.pt", "{'x': x, 'v': w}"},
                   {"list1.pt", "[x]"}}))
    GTEST_SKIP() << "/usr/bin/python3 has no torch (python3-torch)";
  EXPECT_NE(error_of(dir_.path("dtype.pt")).find("input 'x': dtype float64, the model takes float32"), std::string::npos);
  EXPECT_NE(error_of(dir_.path("shape.pt")).find("input 'x': shape [2, 7], the model takes [2, 8]"), std::string::npos);
  EXPECT_NE(error_of(dir_.path("range.pt")).find("input 'x': dim 0 (B) is 5, outside its range 1..4"), std::string::npos);
  EXPECT_NE(error_of(dir_.path("count.pt")).find("holds 1 tensors, the model takes 2 inputs (x, w)"), std::string::npos);
  EXPECT_NE(error_of(dir_.path("names.pt")).find("'v' is neither an input nor a param of the model"), std::string::npos);
  // LibTorch 1.13's reader rejects a one-element list; the hint says what to save instead.
  const std::string list1 = error_of(dir_.path("list1.pt"));
  if (!list1.empty()) EXPECT_NE(list1.find("save (x,) rather than [x]"), std::string::npos) << list1;
  EXPECT_NE(error_of(dir_.path("missing.pt")).find("no such file or folder"), std::string::npos);
  save_case_folder(dir_.path("bad"), 0, "inputs", {{"x", at::ones({2, 8})}, {"w", at::ones({8})}});
  std::filesystem::resize_file(dir_.path("bad/case-0/inputs/x.bin"), 10);
  EXPECT_NE(error_of(dir_.path("bad/case-0")).find("input 'x': "), std::string::npos);
  // Inconsistent symbolic dims: B is 2 in x and 3 in a second input that uses it.
  const Model two = load_model_text(R"(format: gbcheck/v1
name: two
dims: {B: [1, 4]}
inputs:
  a: {shape: [B], dtype: float32}
  b: {shape: [B], dtype: float32}
graph:
  - {id: y, op: add, args: [a, b]}
outputs: [y]
)", "two.yaml");
  save_case_folder(dir_.path("two"), 0, "inputs", {{"a", at::ones({2})}, {"b", at::ones({3})}});
  try {
    load_given_cases(two, {dir_.path("two/case-0")});
    ADD_FAILURE() << "no error";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("input 'b': dim 0 is 3, but B is 2 in an earlier input"), std::string::npos) << e.what();
  }
}

// The command line: generated cases pass, the user's NaN finds the fault; what the run used and
// produced is kept and reads back.
TEST_F(UserInputs, CheckFindsWhatOnlyTheUsersValuesReach) {
  const std::string model = dir_.file("rowmax.yaml", kModel);
  if (!torch_save("nan.pt", "(torch.where(x == 3, torch.tensor(float('nan')), x), w)"))
    GTEST_SKIP() << "/usr/bin/python3 has no torch (python3-torch)";
  const std::string base = testing::built_binary("gbcheck") + " " + model + " --backend gbc --inject-fault nan-drop --cases 3";
  const testing::CommandResult generated = testing::run_command(base + " -q");
  EXPECT_EQ(generated.exit_code, 0) << generated.output;
  const testing::CommandResult given = testing::run_command(base + " --inputs " + dir_.path("nan.pt") + " --save-inputs " +
                                                            dir_.path("in") + " --save-outputs " + dir_.path("out"));
  EXPECT_EQ(given.exit_code, 1) << given.output;
  EXPECT_NE(given.output.find("case 3 "), std::string::npos) << given.output;
  EXPECT_NE(given.output.find("--inputs " + dir_.path("nan.pt") + " --cases 3"), std::string::npos) << given.output;
  // Eager's NaN and gbc's dropped one, kept side by side; the saved inputs replay the failure.
  auto output_y = [&](const std::string& folder) {
    const nlohmann::json m = nlohmann::json::parse(std::ifstream(dir_.path(folder + "/manifest.json")));
    return load_tensor_file(m.at("outputs").at(0), dir_.path(folder));
  };
  EXPECT_TRUE(std::isnan(output_y("out/case-3")[0].item<float>()));
  EXPECT_FALSE(std::isnan(output_y("out/case-3/gbc")[0].item<float>()));
  const std::vector<GivenCase> saved = load_given_cases(model_, {dir_.path("in")});
  ASSERT_EQ(saved.size(), 4u);
  EXPECT_TRUE(std::isnan(saved[3].inputs[0][0][3].item<float>()));
  EXPECT_TRUE(std::filesystem::exists(dir_.path("out/case-3/gbc/outputs/y.bin")));
  const testing::CommandResult replay = testing::run_command(testing::built_binary("gbcheck") + " " + model +
                                                             " --backend gbc --inject-fault nan-drop --cases 0 -q --inputs " +
                                                             dir_.path("in/case-3"));
  EXPECT_EQ(replay.exit_code, 1) << replay.output;
  const testing::CommandResult bad = testing::run_command(base + " --inputs " + dir_.path("missing.pt"));
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
}

// reduce, repro and bisect take --inputs too, numbering the user's cases after the generated ones
// as check does: each finds the failure only the user's NaN reaches, works on those values, and
// the commands they print name them.
TEST_F(UserInputs, ReduceReproAndBisectRunOnTheUsersCases) {
  const std::string model = dir_.file("rowmax.yaml", kModel);
  const std::string nan = dir_.file("nan.json", R"({
    "x": {"dtype": "float32", "shape": [2, 8], "values": [1, 2, 3, "nan", 5, 6, 7, 8, -1, -2, -3, -4, -5, -6, -7, -8]},
    "w": {"dtype": "float32", "shape": [8], "values": [1, 1, 1, 1, 1, 1, 1, 1]}})");
  auto gbcheck = [&](const std::string& command, const std::string& args) {
    return testing::run_command(testing::built_binary("gbcheck") + " " + command + " " + model +
                                " --backend gbc --inject-fault nan-drop --cases 2 " + args);
  };
  const testing::CommandResult drawn = gbcheck("reduce", "--out " + dir_.path("drawn"));
  EXPECT_EQ(drawn.exit_code, 1) << drawn.output;  // nothing to reduce: no drawn case holds a NaN
  const testing::CommandResult reduced = gbcheck("reduce", "--inputs " + nan + " --out " + dir_.path("reduced"));
  ASSERT_EQ(reduced.exit_code, 0) << reduced.output;
  EXPECT_NE(reduced.output.find("| case 2 |"), std::string::npos) << reduced.output;
  std::ifstream values(dir_.path("reduced/inputs.json"));
  const std::string failing((std::istreambuf_iterator<char>(values)), std::istreambuf_iterator<char>());
  EXPECT_NE(failing.find("\"nan\""), std::string::npos) << failing;  // reduced from the user's values

  const testing::CommandResult repro = gbcheck("repro", "--inputs " + nan + " --out " + dir_.path("repro"));
  EXPECT_EQ(repro.exit_code, 1) << repro.output;
  EXPECT_NE(repro.output.find("(case 2, seed 0)"), std::string::npos) << repro.output;
  const std::vector<GivenCase> packaged = load_given_cases(model_, {dir_.path("repro")});
  ASSERT_EQ(packaged.size(), 1u);
  EXPECT_TRUE(std::isnan(packaged[0].inputs[0][0][3].item<float>()));
  std::ifstream readme(dir_.path("repro/README.md"));
  const std::string text((std::istreambuf_iterator<char>(readme)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("--case 2 --inject-fault nan-drop --inputs " + nan + " --cases 2"), std::string::npos) << text;

  const testing::CommandResult bisect = gbcheck("bisect", "--inputs " + nan);
  EXPECT_EQ(bisect.exit_code, 1) << bisect.output;
  EXPECT_NE(bisect.output.find("--inputs " + nan + " --cases 2 --case 2"), std::string::npos) << bisect.output;
}

}  // namespace
}  // namespace gbc
