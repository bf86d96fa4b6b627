// gbc's extern calls (compiler/runtime/extern_call.h): conv2d on oneDNN with its weight packed once
// matches ATen's conv2d for every kind of conv (1x1, strided, grouped, dilated, with and without
// bias, padding as one int), follows an in-place write into its weight and a new weight tensor,
// and leaves what oneDNN cannot take (float64) to ATen bit for bit; gbc's max_pool2d is
// bit-identical to ATen's (padding, ceil_mode, dilation, default stride, NaN, -inf, strided input,
// a symbolic size: the output's shape is the node's inferred one).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "compiler/runtime/extern_call.h"
#include "tests/runtime/runtime_test_util.h"

namespace gbc {
namespace {

using test::load;

struct OneNode {
  Model model;
  std::vector<RtValue> env;
  DimBindings dims;
};

// A model of one node `y = op(x, params...)` and an env holding `tensors` for x and the params.
OneNode one_node(const std::string& node_yaml, const std::string& decls, const std::vector<at::Tensor>& tensors) {
  OneNode n{load("format: gbcheck/v1\nname: one\n" + decls + "graph:\n  - " + node_yaml + "\noutputs: [y]\n"), {}, {}};
  n.env.resize(n.model.graph.values.size());
  for (size_t i = 0; i < n.model.graph.inputs.size(); ++i)
    n.env[static_cast<size_t>(n.model.graph.inputs[i].value)] = RtValue::of(tensors.at(i));
  return n;
}

at::Tensor run(ExternCalls& calls, OneNode& n) {
  const Node& node = n.model.graph.body.nodes.at(0);
  calls.run(n.model.graph, node, n.env, n.dims, c10::Device(c10::kCPU));
  return n.env[static_cast<size_t>(node.output())].tensor;
}

std::string shape(const at::Tensor& t) {
  std::string s;
  for (int64_t d : t.sizes()) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return "[" + s + "]";
}

struct ConvCase {
  int64_t cin, cout, size, kernel, stride, padding, dilation, groups;
  bool bias;
};

TEST(ExternCallTest, Conv2dOnOneDnnMatchesAtenAndFollowsItsWeight) {
  for (const ConvCase& c : std::vector<ConvCase>{{16, 24, 20, 1, 1, 0, 1, 1, false},   // ATen: slow_conv2d
                                                 {8, 12, 17, 3, 2, 1, 1, 1, true},
                                                 {12, 12, 15, 3, 1, 1, 1, 12, false},  // depthwise
                                                 {6, 4, 16, 3, 1, 2, 2, 2, true},
                                                 {3, 8, 33, 7, 2, 3, 1, 1, false}}) {
    at::manual_seed(c.cin * 100 + c.kernel);
    at::Tensor x = at::randn({1, c.cin, c.size, c.size}), w = at::randn({c.cout, c.cin / c.groups, c.kernel, c.kernel});
    at::Tensor b = at::randn({c.cout});
    std::string decls = "inputs:\n  x: {shape: " + shape(x) + "}\nparams:\n  w: {shape: " + shape(w) + "}\n";
    std::string node = "{id: y, op: conv2d, args: [x, w" + std::string(c.bias ? ", b" : "") +
                       "], stride: [" + std::to_string(c.stride) + ", " + std::to_string(c.stride) +
                       "], padding: " + std::to_string(c.padding) + ", dilation: " + std::to_string(c.dilation) +
                       ", groups: " + std::to_string(c.groups) + "}";
    if (c.bias) decls += "  b: {shape: " + shape(b) + "}\n";
    std::vector<at::Tensor> tensors = {x, w};
    if (c.bias) tensors.push_back(b);
    OneNode n = one_node(node, decls, tensors);
    auto expected = [&] {
      return at::conv2d(x, w, c.bias ? c10::optional<at::Tensor>(b) : c10::nullopt, {c.stride, c.stride},
                        {c.padding, c.padding}, {c.dilation, c.dilation}, c.groups);
    };
    ExternCalls calls;
    const std::string what = "conv " + node;
    EXPECT_TRUE(at::allclose(run(calls, n), expected(), 1e-4, 1e-5)) << what;
    EXPECT_TRUE(at::allclose(run(calls, n), expected(), 1e-4, 1e-5)) << what << " (packed weight reused)";
    w.mul_(-2.0);  // in place: the packed weight is stale
    EXPECT_TRUE(at::allclose(run(calls, n), expected(), 1e-4, 1e-5)) << what << " after a write into w";
    w = at::randn_like(w);
    n.env[static_cast<size_t>(n.model.graph.inputs[1].value)] = RtValue::of(w);
    EXPECT_TRUE(at::allclose(run(calls, n), expected(), 1e-4, 1e-5)) << what << " with a new w";
  }
}

TEST(ExternCallTest, Conv2dOneDnnCannotTakeRunsOnAtenBitForBit) {
  at::Tensor x = at::randn({1, 4, 9, 9}, at::kDouble), w = at::randn({4, 4, 1, 1}, at::kDouble);
  EXPECT_FALSE(conv2d_on_onednn(x, w, c10::nullopt));
  EXPECT_FALSE(conv2d_on_onednn(x.to(at::kFloat).requires_grad_(), w.to(at::kFloat), c10::nullopt));
  EXPECT_TRUE(conv2d_on_onednn(x.to(at::kFloat), w.to(at::kFloat), c10::nullopt));
  OneNode n = one_node("{id: y, op: conv2d, args: [x, w]}",
                       "inputs:\n  x: {dtype: float64, shape: [1, 4, 9, 9]}\nparams:\n  w: {dtype: float64, shape: [4, 4, 1, 1]}\n", {x, w});
  ExternCalls calls;
  EXPECT_TRUE(run(calls, n).equal(at::conv2d(x, w)));
}

TEST(ExternCallTest, MaxPool2dIsBitIdenticalToAten) {
  at::manual_seed(5);
  at::Tensor base = at::randn({2, 3, 13, 11});
  base[0][0][0][0] = std::numeric_limits<float>::quiet_NaN();
  base[1][2][5][4] = std::numeric_limits<float>::quiet_NaN();
  base[0][1].fill_(-std::numeric_limits<float>::infinity());
  base[1][0][3][3] = -0.0f;
  struct PoolCase {
    std::string attrs;
    std::vector<int64_t> kernel, stride, padding, dilation;
    bool ceil_mode;
  };
  for (const PoolCase& c : std::vector<PoolCase>{{"kernel_size: 3, stride: 2, padding: 1", {3, 3}, {2, 2}, {1, 1}, {1, 1}, false},
                                                 {"kernel_size: 3, stride: 2, ceil_mode: true", {3, 3}, {2, 2}, {0, 0}, {1, 1}, true},
                                                 {"kernel_size: [2, 3]", {2, 3}, {}, {0, 0}, {1, 1}, false},
                                                 {"kernel_size: 3, stride: 1, padding: 1, dilation: 2", {3, 3}, {1, 1}, {1, 1}, {2, 2}, false},
                                                 {"kernel_size: 2, stride: 2, padding: 1, ceil_mode: true", {2, 2}, {2, 2}, {1, 1}, {1, 1}, true}}) {
    for (const at::Tensor& x : {base, base.transpose(2, 3).contiguous().transpose(2, 3)}) {
      OneNode n = one_node("{id: y, op: max_pool2d, args: [x], " + c.attrs + "}", "inputs:\n  x: {shape: [2, 3, 13, 11]}\n", {x});
      ExternCalls calls;
      at::Tensor got = run(calls, n);
      at::Tensor want = at::max_pool2d(x, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
      ASSERT_EQ(got.sizes(), want.sizes()) << c.attrs;
      EXPECT_TRUE(at::equal(got.isnan(), want.isnan())) << c.attrs;
      EXPECT_TRUE(at::equal(at::nan_to_num(got, 7.0), at::nan_to_num(want, 7.0))) << c.attrs;
      EXPECT_TRUE(at::equal(at::signbit(got), at::signbit(want))) << c.attrs;
    }
  }
}

// The output's size is the node's inferred shape bound to the call's dims: a symbolic H gives the
// same result as ATen for the size it takes.
TEST(ExternCallTest, MaxPool2dOfSymbolicSizeTakesItsShapeFromTheNodesType) {
  at::manual_seed(6);
  for (int64_t h : {13, 6}) {
    at::Tensor x = at::randn({2, 3, h, 11});
    OneNode n = one_node("{id: y, op: max_pool2d, args: [x], kernel_size: 3, stride: 2, padding: 1}",
                         "dims: {H: [4, 13]}\ninputs:\n  x: {shape: [2, 3, H, 11]}\n", {x});
    n.dims["H"] = h;
    ExternCalls calls;
    at::Tensor got = run(calls, n);
    at::Tensor want = at::max_pool2d(x, {3, 3}, {2, 2}, {1, 1});
    ASSERT_EQ(got.sizes(), want.sizes()) << "H=" << h;
    EXPECT_TRUE(at::equal(got, want)) << "H=" << h;
  }
}

}  // namespace
}  // namespace gbc
