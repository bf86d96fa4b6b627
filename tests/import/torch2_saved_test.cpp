// Models saved by PyTorch 2.x (corpus/torchscript/torch2/, written by Debian 13's PyTorch 2.6 with
// make_torch2_models.py, committed because no 2.x runs here) imported by a gbcheck on LibTorch 1.13:
// each loads, imports with its split of native and generic ops, passes the fidelity check, gives on
// PyTorch 2.x's own inputs the outputs PyTorch 2.x gave (bit-exact, or within a rounding for
// scaled_dot_product_attention, which 2.x computes with a blocked kernel), and passes eager vs
// gbc. The operators 2.x added (compiler/aten/newer_aten_ops.h) are what lets the first two load.
#include <gtest/gtest.h>

#include <ATen/ops/allclose.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <filesystem>
#include <map>

#include "compiler/aten/eager_executor.h"
#include "compiler/ir/generic_op.h"
#include "harness/import/torchscript_import.h"
#include "harness/inputs/input_generator.h"
#include "harness/inputs/user_inputs.h"
#include "tests/support/run_command.h"

namespace gbc {
namespace {

struct Torch2Model {
  std::string name, input;
  std::map<std::string, int> generic;  // generic (extern) ops by ATen name; every other op is native
  double atol = 0;                     // 0: 2.x's outputs bit-exact; else the largest difference allowed
};

std::ostream& operator<<(std::ostream& os, const Torch2Model& m) { return os << m.name; }

const std::vector<Torch2Model>& torch2_models() {
  static const std::vector<Torch2Model> models = {
      {"torch2_ops", "x=float32[2,5,16]",
       {{"aten::scaled_dot_product_attention", 4}, {"aten::rms_norm", 2}, {"aten::squeeze.dims", 1}, {"aten::all.dims", 1},
        {"aten::any.dims", 1}},
       1e-6},
      {"encoder_layer_grad", "x=float32[2,10,32]", {{"aten::scaled_dot_product_attention", 1}, {"aten::unflatten.int", 1}}, 1e-6},
      {"conv_bn_relu", "x=float32[1,3,16,16]", {}},
      {"scripted", "x=float32[2,8]", {}},
      {"mlp", "x=float32[4,16]", {}},
      {"pieces", "x=float32[2,6,4]", {}},
      // baddbmm: LibTorch 1.13 and PyTorch 2.6 round it differently (2.4e-7 apart; PyTorch 1.13's
      // torch.jit.load of the same file gives 1.13's value too).
      {"natives", "x=float32[2,4,6]", {{"aten::masked_fill.Scalar", 1}}, 1e-6},
      {"vit", "x=float32[1,3,64,64]", {{"aten::_native_multi_head_attention", 2}}, 1e-6},
  };
  return models;
}

std::string corpus(const std::string& file) { return std::string(GBCHECK_SOURCE_DIR) + "/corpus/torchscript/torch2/" + file; }

class Torch2SavedModel : public ::testing::TestWithParam<Torch2Model> {};

TEST_P(Torch2SavedModel, ImportsFaithfullyAndComputesWhatPyTorch2Computed) {
  const Torch2Model& m = GetParam();
  ImportResult r = import_torchscript(corpus(m.name + ".pt"), parse_import_specs({m.input}, {}));
  EXPECT_TRUE(r.fidelity.identical) << r.fidelity.detail;
  std::map<std::string, int> generic;
  for_each_node(r.model.graph.body, [&](const Node& n) {
    if (is_generic_op(n)) ++generic[generic_op_name(n)];
  });
  EXPECT_EQ(generic, m.generic);
  EXPECT_GT(r.native_nodes, 0);

  // PyTorch 2.x's inputs, as a user's --inputs file, through the imported model's eager run.
  std::vector<GivenCase> given = load_given_cases(r.model, {corpus(m.name + ".inputs.pt")});
  ASSERT_EQ(given.size(), 1u);
  InputGenerator gen(r.model, c10::Device(c10::DeviceType::CPU));
  std::vector<at::Tensor> ours = run_eager(r.model.graph, gen.given_case(0, given[0]).fresh_inputs());
  // PyTorch 2.x's outputs, read as the user's inputs files are (a torch.save tuple).
  std::vector<GivenTensors> saved = read_given_tensors(corpus(m.name + ".outputs.pt"));
  ASSERT_EQ(saved.size(), 1u);
  const std::vector<at::Tensor>& theirs = saved[0].tensors;
  ASSERT_EQ(ours.size(), theirs.size());
  for (size_t i = 0; i < ours.size(); ++i) {
    ASSERT_EQ(ours[i].sizes(), theirs[i].sizes()) << "output " << i;
    ASSERT_EQ(ours[i].scalar_type(), theirs[i].scalar_type()) << "output " << i;
    if (m.atol == 0 || !ours[i].is_floating_point())
      EXPECT_TRUE(ours[i].equal(theirs[i])) << "output " << i << " differs from PyTorch 2.x's";
    else
      EXPECT_TRUE(at::allclose(ours[i], theirs[i], /*rtol=*/0, m.atol))
          << "output " << i << ": max difference " << (ours[i] - theirs[i]).abs().max().item<double>();
  }

  testing::CommandResult check = testing::run_gbcheck_in_source_tree(
      "corpus/torchscript/torch2/" + m.name + ".pt --input " + m.input + " --inputs corpus/torchscript/torch2/" + m.name +
      ".inputs.pt --cases 2 --backend gbc");
  EXPECT_EQ(check.exit_code, 0) << check.output;
  EXPECT_NE(check.output.find("3/3 cases"), std::string::npos) << check.output;
}

INSTANTIATE_TEST_SUITE_P(Corpus, Torch2SavedModel, ::testing::ValuesIn(torch2_models()),
                         [](const ::testing::TestParamInfo<Torch2Model>& info) { return info.param.name; });

// An operator of 2.x that gbcheck does not add: on a LibTorch without it the file does not load,
// and the error names the operator and the line of the model's code that calls it (exit 2).
TEST(Torch2SavedModelErrors, AnOperatorThisLibTorchLacksIsNamedWithItsLine) {
  testing::CommandResult r = testing::run_gbcheck_in_source_tree("import corpus/torchscript/torch2/unknown_op.pt --input float32[6] --out " +
                                                                  std::string(GBCHECK_BINARY_DIR) + "/torch2-unknown-op");
  if (c10::Dispatcher::singleton().findSchema({"aten::nonzero_static", ""})) {
    EXPECT_EQ(r.exit_code, 0) << "this LibTorch has nonzero_static:\n" << r.output;
    return;
  }
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("corpus/torchscript/torch2/unknown_op.pt: error: the model calls aten::nonzero_static, an operator "
                          "LibTorch "),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("does not have: the file was saved by a newer PyTorch (code/__torch__.py:8: _0 = "
                          "torch.nonzero_static(torch.gt(x, 0), size=4))"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(std::filesystem::exists(std::string(GBCHECK_BINARY_DIR) + "/torch2-unknown-op"));
}

}  // namespace
}  // namespace gbc
