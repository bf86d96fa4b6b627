// fold_conv_bn: which conv2d -> batch_norm pairs fold into one conv2d (eval mode, the conv's result
// used by the batch_norm alone, float32/float64, nothing with a side effect between them), the IR
// it makes, and that the folded graph computes what the original does.
#include "compiler/passes/fold_conv_bn.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "compiler/aten/eager_executor.h"
#include "tests/passes/pass_test_util.h"

namespace gbc {
namespace {

using testing::graph_of;
using testing::ir;

std::string conv_bn(const std::string& conv_args, const std::string& bn_attrs, const std::string& between = "",
                    const std::string& outputs = "[y]", const std::string& dtype = "float32") {
  return R"(inputs: {x: {shape: [2, 3, 8, 8], dtype: )" + dtype + R"(}}
params:
  w: {shape: [4, 3, 3, 3], dtype: )" + dtype + R"(}
  b: {shape: [4], dtype: )" + dtype + R"(}
  gamma: {shape: [4], dtype: )" + dtype + R"(}
  beta: {shape: [4], dtype: )" + dtype + R"(}
  mean: {shape: [4], dtype: )" + dtype + R"(}
  var: {shape: [4], dtype: )" + dtype + R"(}
graph:
  - {id: c, op: conv2d, args: )" + conv_args + R"(, stride: 2, padding: 1}
)" + between + R"(  - {id: bn, op: batch_norm, args: [c, gamma, beta, mean, var], )" + bn_attrs + R"(}
  - {id: y, op: relu, args: [bn]}
outputs: )" + outputs + "\n";
}

// The graph's outputs on random inputs (a positive running variance).
std::vector<at::Tensor> run(const Graph& g) {
  at::manual_seed(11);
  std::vector<at::Tensor> in(g.inputs.size());
  in[0] = at::randn({2, 3, 8, 8});
  in[1] = at::randn({4, 3, 3, 3});
  for (size_t k = 2; k < in.size(); ++k) in[k] = at::randn({4});
  in.back() = in.back().abs() + 0.5;
  return run_eager(g, in);
}

TEST(FoldConvBn, EvalBatchNormFoldsIntoTheConvsWeightAndBias) {
  Graph g = graph_of(conv_bn("[x, w, b]", "training: false, eps: 0.001"));
  Graph f = fold_conv_bn(g);
  // The conv moves to the batch_norm's place and writes its result.
  EXPECT_EQ(ir(f), R"(graph t(x: float32[2, 3, 8, 8], param w: float32[4, 3, 3, 3], param b: float32[4], param gamma: float32[4], param beta: float32[4], param mean: float32[4], param var: float32[4]) {
  bn.var_eps: float32[4] = add(var, 0.001)
  bn.rstd: float32[4] = rsqrt(bn.var_eps)
  bn.scale: float32[4] = mul(bn.rstd, gamma)
  bn.mean_scaled: float32[4] = mul(mean, bn.scale)
  bn.shift: float32[4] = sub(beta, bn.mean_scaled)
  bn.scale_w: float32[4, 1, 1, 1] = reshape(bn.scale, shape=[4, 1, 1, 1])
  bn.folded_weight: float32[4, 3, 3, 3] = mul(w, bn.scale_w)
  bn.bias_scaled: float32[4] = mul(b, bn.scale)
  bn.folded_bias: float32[4] = add(bn.bias_scaled, bn.shift)
  bn: float32[2, 4, 4, 4] = conv2d(x, bn.folded_weight, bn.folded_bias, padding=[1], stride=[2])
  y: float32[2, 4, 4, 4] = relu(bn)
  return y
}
)");
  std::vector<at::Tensor> want = run(g), got = run(f);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(at::allclose(got[0], want[0], 1e-5, 1e-5));
}

TEST(FoldConvBn, AConvWithoutBiasTakesTheShiftAsItsBias) {
  Graph g = graph_of(conv_bn("[x, w]", "training: false"));
  Graph f = fold_conv_bn(g);
  EXPECT_EQ(ir(f), R"(graph t(x: float32[2, 3, 8, 8], param w: float32[4, 3, 3, 3], param b: float32[4], param gamma: float32[4], param beta: float32[4], param mean: float32[4], param var: float32[4]) {
  bn.var_eps: float32[4] = add(var, 1.0000000000000001e-05)
  bn.rstd: float32[4] = rsqrt(bn.var_eps)
  bn.scale: float32[4] = mul(bn.rstd, gamma)
  bn.mean_scaled: float32[4] = mul(mean, bn.scale)
  bn.shift: float32[4] = sub(beta, bn.mean_scaled)
  bn.scale_w: float32[4, 1, 1, 1] = reshape(bn.scale, shape=[4, 1, 1, 1])
  bn.folded_weight: float32[4, 3, 3, 3] = mul(w, bn.scale_w)
  bn: float32[2, 4, 4, 4] = conv2d(x, bn.folded_weight, bn.shift, padding=[1], stride=[2])
  y: float32[2, 4, 4, 4] = relu(bn)
  return y
}
)");
  EXPECT_TRUE(at::allclose(run(f)[0], run(g)[0], 1e-5, 1e-5));
}

TEST(FoldConvBn, LeavesWhatItCannotFold) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"training", conv_bn("[x, w, b]", "training: true")},
      {"the conv's result is also an output", conv_bn("[x, w, b]", "training: false", "", "[y, c]")},
      {"the conv's result has another use", conv_bn("[x, w, b]", "training: false", "  - {id: e, op: exp, args: [c]}\n", "[y, e]")},
      {"a write between them", conv_bn("[x, w, b]", "training: false", "  - {op: add_, args: [w, 1.0]}\n")},
      {"float16", conv_bn("[x, w, b]", "training: false", "", "[y]", "float16")},
  };
  for (const auto& [why, text] : cases) {
    Graph g = graph_of(text);
    EXPECT_EQ(ir(fold_conv_bn(g)), ir(g)) << why;
  }
}

}  // namespace
}  // namespace gbc
