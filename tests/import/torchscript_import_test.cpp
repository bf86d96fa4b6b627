// gbcheck import on TorchScript files that corpus/torchscript/make_models.py writes with random
// weights (Debian's python3-torch; ci/lib/setup.sh installs it), small ones and real models
// (torchvision's CNNs and ViT, a transformer encoder layer, an LSTM): each imports with the expected
// split of native and generic ops, passes the fidelity check, survives the round trip through
// model.yaml and weights.safetensors, and passes `gbcheck` eager vs gbc; a branch on data becomes
// the format's if; hardswish, hardsigmoid, masked_fill, addmm, baddbmm, embedding and
// adaptive_avg_pool2d import as the format's ops (the elementwise ones fused); explain names
// generic ops and their Python lines; bad input is exit 2 with its
// exact message, and nothing is written half-way. The TorchScript adapters (ts-freeze, nnc-py)
// pass every model, small and real, or fail as a found bug says.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "compiler/aten/eager_executor.h"
#include "compiler/ir/generic_op.h"
#include "harness/adapters/adapter_probe.h"
#include "harness/adapters/backends_config.h"
#include "harness/import/model_dir.h"
#include "harness/import/torchscript_import.h"
#include "harness/inputs/input_generator.h"
#include "harness/model/model_loader.h"
#include "harness/report/terminal_report.h"
#include "harness/runner/check_runner.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

// The TorchScript files, written into the build tree when make_models.py is newer than the last
// run's stamp (writing the real models takes most of a minute), under a lock, as ctest runs these
// tests in parallel.
class TorchScriptImport : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir("torchscript-import");
    const std::string script = std::string(GBCHECK_SOURCE_DIR) + "/corpus/torchscript/make_models.py";
    const std::string corpus = corpus_dir(), stamp = corpus + "/made.stamp";
    made_ = testing::run_command("mkdir -p " + corpus + " && flock " + corpus + ".lock sh -c '[ " + stamp + " -nt " +
                                 script + " ] || { /usr/bin/python3 " + script + " " + corpus + " --real && touch " +
                                 stamp + "; }'");
  }
  static std::string corpus_dir() { return std::string(GBCHECK_BINARY_DIR) + "/torchscript-corpus"; }
  static void TearDownTestSuite() { delete dir_; }
  void SetUp() override {
    if (made_.exit_code != 0 && made_.output.find("No module named 'torch") != std::string::npos)
      GTEST_SKIP() << "/usr/bin/python3 has no torch: install python3-torch python3-torchvision (ci/lib/setup.sh)";
    ASSERT_EQ(made_.exit_code, 0) << made_.output;
  }

  static std::string pt(const std::string& name) { return corpus_dir() + "/" + name + ".pt"; }
  static ImportResult import(const std::string& name, std::vector<std::string> inputs, std::vector<std::string> dims = {}) {
    return import_torchscript(pt(name), parse_import_specs(inputs, dims));
  }
  static int count_ops(const Model& m, const std::string& op) {
    int n = 0;
    for_each_node(m.graph.body, [&](const Node& node) { n += node.op == op_id(op); });
    return n;
  }
  // Each op of the model by count: the format's ops by name, generic ones by their ATen name.
  static std::map<std::string, int> op_counts(const Model& m) {
    std::map<std::string, int> counts;
    for_each_node(m.graph.body, [&](const Node& node) { ++counts[is_generic_op(node) ? generic_op_name(node) : op_name(node.op)]; });
    return counts;
  }
  static std::vector<std::string> generic_names(const Model& m) {
    std::vector<std::string> names;
    for_each_node(m.graph.body, [&](const Node& node) {
      if (is_generic_op(node)) names.push_back(generic_op_name(node));
    });
    return names;
  }
  testing::CommandResult gbcheck(const std::string& args) {
    return testing::run_command("cd " + std::string(GBCHECK_SOURCE_DIR) + " && " + testing::built_binary("gbcheck") + " " + args);
  }

  static testing::TempDir* dir_;
  static testing::CommandResult made_;
};
testing::TempDir* TorchScriptImport::dir_ = nullptr;
testing::CommandResult TorchScriptImport::made_;

TEST_F(TorchScriptImport, ConvBnReluImportsNativelyWithBatchNormKept) {
  ImportResult r = import("conv_bn_relu", {"x=float32[1,3,16,16]"});
  EXPECT_TRUE(r.fidelity.identical) << r.fidelity.detail;
  EXPECT_EQ(r.generic_nodes, 0);
  EXPECT_EQ(count_ops(r.model, "conv2d"), 1);
  EXPECT_EQ(count_ops(r.model, "batch_norm"), 1);  // optimize_numerics off: not folded into the conv
  EXPECT_EQ(count_ops(r.model, "relu"), 1);
  ASSERT_EQ(r.model.params.size(), 6u);  // conv weight and bias, bn weight, bias, mean, var
  for (const auto& p : r.model.params) EXPECT_TRUE(p.weights.has_value()) << p.name;
  // Provenance: the node points at the Python line of make_models.py that called it.
  bool has_origin = false;
  for_each_node(r.model.graph.body, [&](const Node& n) {
    has_origin = has_origin || n.loc.origin.find("make_models.py:") != std::string::npos;
  });
  EXPECT_TRUE(has_origin);
}

TEST_F(TorchScriptImport, ScriptedShapeChecksAndHelpersFold) {
  ImportResult r = import("scripted", {"float32[2,8]"});
  EXPECT_TRUE(r.fidelity.identical) << r.fidelity.detail;
  EXPECT_EQ(count_ops(r.model, "linear"), 1);
  EXPECT_EQ(count_ops(r.model, "tanh"), 1);
  EXPECT_EQ(count_ops(r.model, "if"), 0);  // the checks on shapes were decided at import
}

TEST_F(TorchScriptImport, ScriptedRaiseForTheGivenShapeIsAnErrorAtItsPythonLine) {
  try {
    import("scripted", {"float32[2,6]"});
    FAIL() << "expected a ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(e.diagnostics().str().find("the model raises an exception for these inputs"), std::string::npos)
        << e.diagnostics().str();
    EXPECT_NE(e.diagnostics().str().find("(python: "), std::string::npos) << e.diagnostics().str();
  }
}

TEST_F(TorchScriptImport, BranchOnDataBecomesTheFormatsIf) {
  ImportResult r = import("data_if", {"x=float32[3,5]"});
  EXPECT_TRUE(r.fidelity.identical) << r.fidelity.detail;
  ASSERT_EQ(count_ops(r.model, "if"), 1);
  for_each_node(r.model.graph.body, [&](const Node& n) {
    if (n.op != OpId::If) return;
    ASSERT_EQ(n.blocks.size(), 2u);
    EXPECT_EQ(count_ops(r.model, "relu"), 1);
    // The else branch returns x itself: the format wants a value defined in the branch.
    ASSERT_EQ(n.blocks[1].nodes.size(), 1u);
    EXPECT_EQ(generic_op_name(n.blocks[1].nodes[0]), "aten::clone");
    EXPECT_NE(n.loc.origin.find("make_models.py:"), std::string::npos) << n.loc.origin;
  });
  // Several cases take both branches; eager and gbc agree on each.
  testing::CommandResult check = gbcheck(pt("data_if") + " --input float32[3,5] --backend gbc --cases 6");
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

TEST_F(TorchScriptImport, OpsTheFormatLacksBecomeGenericAtenOps) {
  ImportResult r = import("generic", {"float32[1,4,8,8]"});
  EXPECT_TRUE(r.fidelity.identical) << r.fidelity.detail;
  std::vector<std::string> names = generic_names(r.model);
  EXPECT_NE(std::find(names.begin(), names.end(), "aten::cumsum"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "aten::softplus"), names.end());
  EXPECT_EQ(r.generic_nodes, static_cast<int>(names.size()));
  EXPECT_EQ(count_ops(r.model, "conv2d"), 1);
  EXPECT_EQ(count_ops(r.model, "max_pool2d"), 1);  // native, ceil_mode and all
  EXPECT_EQ(count_ops(r.model, "add"), 2);
  // explain lists each as an extern call by its ATen name, with the user's Python line.
  testing::CommandResult ex = gbcheck("explain " + pt("generic") + " --input float32[1,4,8,8] --cases 1");
  ASSERT_EQ(ex.exit_code, 0) << ex.output;
  for (const std::string& name : {"aten::cumsum", "aten::softplus"}) {
    const size_t at = ex.output.find("  extern " + name + " -> ");
    ASSERT_NE(at, std::string::npos) << name << "\n" << ex.output;
    const std::string line = ex.output.substr(at, ex.output.find('\n', at) - at);
    EXPECT_NE(line.find("(python: "), std::string::npos) << line;
    EXPECT_NE(line.find("make_models.py:"), std::string::npos) << line;
  }
}

TEST_F(TorchScriptImport, TransformerAndMobileNetOpsImportAsTheFormatsOwn) {
  ImportResult r = import("natives", {"x=float32[2,4,6]"});
  EXPECT_TRUE(r.fidelity.identical) << r.fidelity.detail;
  std::map<std::string, int> ops = op_counts(r.model);
  for (const char* op : {"hardswish", "hardsigmoid", "addmm", "baddbmm", "embedding", "adaptive_avg_pool2d"})
    EXPECT_EQ(ops[op], 1) << op;
  EXPECT_EQ(ops["where"], 1);   // masked_fill of a float tensor
  EXPECT_EQ(ops["matmul"], 1);  // addmm with beta = alpha = 1: mm + add, as TorchScript runs it
  // A float value into an int64 tensor: masked_fill truncates it, where would promote the result.
  EXPECT_EQ(generic_names(r.model), std::vector<std::string>{"aten::masked_fill.Scalar"});
  testing::CommandResult check = gbcheck(pt("natives") + " --input float32[2,4,6] --backend gbc --cases 3");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  // The elementwise ones fuse: hardswish, hardsigmoid and the where are computed by kernels.
  testing::CommandResult ex = gbcheck("explain " + pt("natives") + " --input float32[2,4,6] --cases 1");
  ASSERT_EQ(ex.exit_code, 0) << ex.output;
  for_each_node(r.model.graph.body, [&](const Node& n) {
    if (n.op != OpId::Hardswish && n.op != OpId::Hardsigmoid && n.op != OpId::Where) return;
    const std::regex kernel_line("\\n  kernel [^\\n]* computes [^\\n]*\\b" + r.model.graph.name_of(n.output()) + "\\b");
    EXPECT_TRUE(std::regex_search(ex.output, kernel_line)) << op_name(n.op) << "\n" << ex.output;
  });
  EXPECT_EQ(ex.output.find("extern aten::hardswish"), std::string::npos) << ex.output;
}

TEST_F(TorchScriptImport, PiecesFillsAndClampsImportAsTheFormatsOwnOps) {
  ImportResult r = import("pieces", {"x=float32[2,6,4]"});
  EXPECT_TRUE(r.fidelity.identical) << r.fidelity.detail;
  EXPECT_EQ(r.generic_nodes, 0) << ::testing::PrintToString(generic_names(r.model));
  std::map<std::string, int> ops = op_counts(r.model);
  // chunk 3 + split 2 + unbind 2 + select 1 slices; unbind and select squeeze theirs.
  EXPECT_EQ(ops["slice"], 8);
  EXPECT_EQ(ops["squeeze"], 3);
  EXPECT_EQ(ops["full"], 2);   // zeros and ones
  EXPECT_EQ(ops["clamp"], 2);  // relu6 and hardtanh
  testing::CommandResult check = gbcheck(pt("pieces") + " --input float32[2,6,4] --backend gbc --cases 3");
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

TEST_F(TorchScriptImport, RoundTripThroughModelYamlAndWeightsComputesTheSame) {
  ImportResult r = import("mlp", {"x=float32[4,16]"});
  ASSERT_TRUE(r.fidelity.identical) << r.fidelity.detail;
  const std::string out = dir_->path("mlp-out");
  write_model_dir(r.model, out, "test");
  ASSERT_TRUE(fs::exists(out + "/weights.safetensors"));
  Model loaded = load_model_file(out + "/model.yaml");
  ASSERT_EQ(loaded.params.size(), r.model.params.size());
  InputGenerator a(r.model, c10::Device(c10::DeviceType::CPU)), b(loaded, c10::Device(c10::DeviceType::CPU));
  std::vector<at::Tensor> x = run_eager(r.model.graph, a.make_case(0).fresh_inputs());
  std::vector<at::Tensor> y = run_eager(loaded.graph, b.make_case(0).fresh_inputs());
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_TRUE(x[i].equal(y[i]));
}

// The real models: each imports with exactly this split of native and generic (extern) ops,
// so that coverage cannot regress unnoticed, is faithful to TorchScript, and passes eager vs gbc.
struct RealModel {
  std::string name;
  std::string input;
  std::map<std::string, int> ops;
};

std::ostream& operator<<(std::ostream& os, const RealModel& m) { return os << m.name; }

const std::vector<RealModel>& real_models() {
  static const std::vector<RealModel> models = {
      {"resnet18", "x=float32[1,3,64,64]",
       {{"conv2d", 20}, {"batch_norm", 20}, {"relu", 17}, {"add", 8}, {"mean", 1}, {"linear", 1}, {"flatten", 1},
        {"max_pool2d", 1}}},
      {"mobilenet_v2", "x=float32[1,3,64,64]",  // relu6 is hardtanh, clamp in the format
       {{"conv2d", 52}, {"batch_norm", 52}, {"clamp", 35}, {"add", 10}, {"mean", 1}, {"linear", 1}, {"flatten", 1}}},
      {"mobilenet_v3_small", "x=float32[1,3,64,64]",  // its squeeze-excitation pools are means
       {{"conv2d", 52}, {"batch_norm", 34}, {"hardswish", 19}, {"relu", 14}, {"mean", 10}, {"hardsigmoid", 9},
        {"mul", 9}, {"add", 6}, {"linear", 2}, {"flatten", 1}}},
      {"squeezenet1_0", "x=float32[1,3,64,64]",
       {{"relu", 26}, {"conv2d", 26}, {"cat", 8}, {"max_pool2d", 3}, {"mean", 1}, {"flatten", 1}}},
      {"efficientnet_b0", "x=float32[1,3,64,64]",  // adaptive_avg_pool2d to 1x1 is a mean
       {{"conv2d", 81}, {"silu", 49}, {"batch_norm", 49}, {"mean", 17}, {"sigmoid", 16}, {"mul", 16}, {"add", 9},
        {"linear", 1}, {"flatten", 1}}},
      {"convnext_tiny", "x=float32[1,3,64,64]",
       {{"permute", 46}, {"linear", 37}, {"layer_norm", 23}, {"conv2d", 22}, {"mul", 18}, {"gelu", 18}, {"add", 18},
        {"mean", 1}, {"flatten", 1}}},
      {"vit", "x=float32[1,3,64,64]",  // select is a slice and a squeeze
       {{"linear", 5}, {"layer_norm", 5}, {"add", 5}, {"slice", 2}, {"gelu", 2}, {"aten::_native_multi_head_attention", 2},
        {"squeeze", 1}, {"reshape", 1}, {"permute", 1}, {"expand", 1}, {"conv2d", 1}, {"cat", 1}}},
      {"encoder_layer", "x=float32[2,10,32]", {{"aten::_transformer_encoder_layer_fwd", 1}}},
      {"encoder_layer_grad", "x=float32[2,10,32]",  // chunk is slices; contiguous is the tensor itself
       {{"transpose", 7}, {"reshape", 5}, {"linear", 4}, {"slice", 3}, {"layer_norm", 2}, {"bmm", 2}, {"add", 2},
        {"softmax", 1}, {"relu", 1}, {"div", 1}}},
      {"lstm", "x=float32[2,7,12]", {{"full", 2}, {"aten::lstm.input", 1}}},
  };
  return models;
}

class RealModelImport : public TorchScriptImport, public ::testing::WithParamInterface<RealModel> {};

TEST_P(RealModelImport, ImportsWithItsNativeSplitFaithfullyAndPassesEagerVsGbc) {
  const RealModel& m = GetParam();
  ImportResult r = import(m.name, {m.input});
  EXPECT_TRUE(r.fidelity.identical) << r.fidelity.detail;
  EXPECT_EQ(op_counts(r.model), m.ops);
  int generic = 0;
  for (const auto& [op, count] : m.ops) generic += op.rfind("aten::", 0) == 0 ? count : 0;
  EXPECT_EQ(r.generic_nodes, generic);
  for (const auto& p : r.model.params) EXPECT_TRUE(p.weights.has_value()) << p.name;
  std::cout << m.name << " import: " << r.seconds << " s, " << r.native_nodes << " native, " << r.generic_nodes << " generic\n";
  testing::CommandResult check = gbcheck(pt(m.name) + " --input " + m.input + " --backend gbc --cases 2");
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

INSTANTIATE_TEST_SUITE_P(Corpus, RealModelImport, ::testing::ValuesIn(real_models()),
                         [](const ::testing::TestParamInfo<RealModel>& info) { return info.param.name; });

// Every model of the import corpus, the real ones too, through the TorchScript adapters
// (ts-freeze and nnc-py, docs/adapters.md): each passes, or fails as its entry says, with the found
// bug it is (kept under corpus/found/). The checks run in this process, so that one adapter per
// backend serves every model of the suite (a Python interpreter importing torch is 2 to 3 CPU
// seconds a start). The real CNNs get the smallest images they allow: without LLVM, NNC interprets
// its fused kernels element by element, so nnc-py's time grows with the feature maps (mobilenet_v2,
// 45 fusion groups: about 14 CPU s a run at 32x32, 4 s at 16x16; at 64x64 a compile took 40 s and
// more on a loaded machine); squeezenet1_0's pools and convnext_tiny's 2x2 downsampling need 32x32,
// vit's patches its 64x64. Skipped where the adapters cannot run.
struct ImportedOnAdapters {
  std::string name, input;
  int cases;
  std::string ts_freeze_fails;  // "" when ts-freeze passes; else the corpus/found/ entry that explains it
  std::string nnc_py_fails;
};

std::ostream& operator<<(std::ostream& os, const ImportedOnAdapters& m) { return os << m.name; }

const std::vector<ImportedOnAdapters>& imported_on_adapters() {
  static const std::vector<ImportedOnAdapters> models = {
      {"conv_bn_relu", "x=float32[1,3,16,16]", 2, "", ""},
      {"scripted", "x=float32[2,8]", 2, "", ""},
      {"mlp", "x=float32[4,16]", 2, "", ""},
      // hardswish after a conv, which ts-freeze gets wrong (corpus/found/ts-freeze-mkldnn-hardswish,
      // reproduced by tests/adapters/), is native now: generic.pt's generic op is softplus.
      {"generic", "x=float32[1,4,8,8]", 2, "", ""},
      {"data_if", "x=float32[3,5]", 2, "", ""},
      {"pieces", "x=float32[2,6,4]", 2, "", ""},
      {"natives", "x=float32[2,4,6]", 2, "", ""},
      {"resnet18", "x=float32[1,3,16,16]", 1, "", ""},
      {"mobilenet_v2", "x=float32[1,3,16,16]", 1, "", ""},
      {"mobilenet_v3_small", "x=float32[1,3,16,16]", 1, "", ""},
      {"squeezenet1_0", "x=float32[1,3,32,32]", 1, "", ""},
      {"efficientnet_b0", "x=float32[1,3,16,16]", 1, "", ""},
      {"convnext_tiny", "x=float32[1,3,32,32]", 1, "", ""},
      {"vit", "x=float32[1,3,64,64]", 1, "", ""},
      {"encoder_layer", "x=float32[2,10,32]", 1, "", ""},
      {"encoder_layer_grad", "x=float32[2,10,32]", 1, "", ""},
      {"lstm", "x=float32[2,7,12]", 1, "", ""},
  };
  return models;
}

class ImportedModelOnAdapters : public TorchScriptImport, public ::testing::WithParamInterface<ImportedOnAdapters> {};

TEST_P(ImportedModelOnAdapters, PassesOrFailsAsItsFoundBugSays) {
  const ImportedOnAdapters& m = GetParam();
  register_external_backends();
  for (const char* name : {"ts-freeze", "nnc-py"}) {
    const AdapterSpec* spec = registered_adapter(name);
    ASSERT_NE(spec, nullptr) << name << " is not in configs/backends.yaml";
    if (std::string why = adapter_unavailable_reason(*spec); !why.empty()) GTEST_SKIP() << name << " cannot run here: " << why;
  }
  ImportResult imported = import(m.name, {m.input});
  RunOptions options = run_options_from_model(imported.model);
  options.backends = {"ts-freeze", "nnc-py"};
  options.cases = m.cases;
  options.max_shrink_tries = 0;
  const auto start = std::chrono::steady_clock::now();
  CheckReport report = run_check(imported.model, options);
  std::ostringstream text;
  print_terminal_report(report, text, TerminalStyle{});
  ASSERT_EQ(report.backends.size(), 2u) << text.str();
  for (const BackendReport& b : report.backends) {
    const std::string& fails = b.backend == "ts-freeze" ? m.ts_freeze_fails : m.nnc_py_fails;
    EXPECT_EQ(b.pass(), fails.empty()) << b.backend << (fails.empty() ? " passes" : " fails: " + fails) << "\n" << text.str();
    EXPECT_EQ(b.cases_run, m.cases) << text.str();
  }
  std::cout << m.name << " " << m.input << " on ts-freeze and nnc-py: "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() << " s\n";
}

INSTANTIATE_TEST_SUITE_P(Corpus, ImportedModelOnAdapters, ::testing::ValuesIn(imported_on_adapters()),
                         [](const ::testing::TestParamInfo<ImportedOnAdapters>& info) { return info.param.name; });

TEST_F(TorchScriptImport, Resnet18RoundTripsThroughItsModelFolder) {
  const std::string out = dir_->path("resnet18");
  testing::CommandResult imp = gbcheck("import " + pt("resnet18") + " --input x=float32[1,3,64,64] --out " + out);
  ASSERT_EQ(imp.exit_code, 0) << imp.output;
  EXPECT_NE(imp.output.find("fidelity: PASS 1 output bit-identical to TorchScript"), std::string::npos) << imp.output;
  testing::CommandResult check = gbcheck(out + "/model.yaml --backend gbc --cases 2");
  EXPECT_EQ(check.exit_code, 0) << check.output;
}

TEST_F(TorchScriptImport, CheckImportsInMemoryWithEveryCheckOption) {
  for (const char* name : {"conv_bn_relu", "mlp", "generic"}) {
    std::string input = std::string(name) == "mlp" ? "float32[4,16]" : std::string(name) == "generic" ? "float32[1,4,8,8]" : "float32[1,3,16,16]";
    testing::CommandResult r = gbcheck(pt(name) + " --input " + input + " --backend gbc --cases 3 --seed 7");
    EXPECT_EQ(r.exit_code, 0) << name << "\n" << r.output;
  }
}

TEST_F(TorchScriptImport, BadInputIsExit2WithItsMessageAndWritesNothing) {
  const std::string bogus = dir_->file("bogus.pt", "not a zip file");
  const std::string out = dir_->path("never");
  struct Case {
    std::string args;
    std::string message;
  };
  std::ifstream full(pt("mlp"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(full)), std::istreambuf_iterator<char>());
  const std::string truncated = dir_->file("truncated.pt", bytes.substr(0, bytes.size() / 2));
  const std::vector<Case> cases = {
      {bogus + " --input float32[4,16]", bogus + ": error: not a TorchScript file LibTorch can load: "},
      {truncated + " --input float32[4,16]", truncated + ": error: not a TorchScript file LibTorch can load: "},
      {pt("mlp") + " --input float32[4,16] --input float32[4,16]",
       pt("mlp") + ": error: forward takes 1 inputs (x), --input gives 2; hint: give one --input"},
      {pt("mlp") + " --input int64[4,16]", "error: aten::linear: mat1 and mat2 must have the same dtype"},
      {pt("mlp") + " --input float32[4,16] --dim B=8:2",
       "command line: error: --dim 'B=8:2': the range must be two sizes with 1 <= MIN <= MAX"},
      {pt("mlp") + " --input float32[B,16]", "command line: error: --input 'float32[B,16]': dim 'B' is not declared"},
      {pt("mlp") + " --input floaty[4,16]", "command line: error: --input 'floaty[4,16]': unknown dtype 'floaty'"},
  };
  for (const auto& c : cases) {
    testing::CommandResult r = gbcheck("import " + c.args + " --out " + out);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_FALSE(fs::exists(out)) << c.args;
  }
}

}  // namespace
}  // namespace gbc
