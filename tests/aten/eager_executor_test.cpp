// The eager executor as a whole: dim binding, data-dependent control flow and sizes, host scalars,
// side effects (print, in-place mutation of inputs, batch_norm's running stats), the global RNG,
// and failures reported as OpError at the node's file:line:col.
#include <ATen/Context.h>
#include <ATen/ops/add.h>
#include <ATen/ops/batch_norm.h>
#include <ATen/ops/dropout.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/gt.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/neg.h>
#include <ATen/ops/nonzero.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/tensor.h>

#include <algorithm>
#include <sstream>

#include "tests/aten/aten_test_util.h"

namespace gbc {
namespace {

using testing::load;
using testing::make_inputs;
using testing::model_text;
using testing::same;

at::Tensor floats(std::vector<float> v) { return at::tensor(v, at::TensorOptions().dtype(at::kFloat)); }

TEST(EagerExecutor, MlpExampleMatchesAten) {
  Model m = load_model_file(std::string(GBCHECK_SOURCE_DIR) + "/corpus/examples/mlp.yaml");
  std::vector<at::Tensor> in = make_inputs(m, {{"B", 4}});
  std::vector<at::Tensor> out = run_eager(m.graph, in);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(same(out[0], at::softmax(at::gelu(at::matmul(in[0], in[1]), "none"), -1)));
}

TEST(EagerExecutor, SymbolicReshapeUsesBoundDims) {
  Model m = load(model_text("  x: {shape: [B, 6], dtype: float32}\n",
                            "  - {id: r, op: reshape, args: [x], shape: [B, 2, 3]}\n"
                            "  - {id: e, op: expand, args: [r], size: [2, B, 2, 3]}\n"
                            "  - {id: y, op: reshape, args: [e], shape: [-1, 3]}\n",
                            "[r, y]", "dims: {B: [1, 8]}\n"));
  for (int64_t b : {1, 2, 5}) {
    std::vector<at::Tensor> in = make_inputs(m, {{"B", b}});
    std::vector<at::Tensor> out = run_eager(m.graph, in);
    EXPECT_TRUE(same(out[0], in[0].reshape({b, 2, 3}))) << "B=" << b;
    EXPECT_TRUE(same(out[1], in[0].reshape({b, 2, 3}).expand({2, b, 2, 3}).reshape({-1, 3}))) << "B=" << b;
  }
}

const std::string kIfModel = model_text("  x: {shape: [3], dtype: float32}\n",
                                        "  - {id: s, op: sum, args: [x]}\n"
                                        "  - {id: p, op: gt, args: [s, 0]}\n"
                                        "  - op: if\n"
                                        "    args: [p]\n"
                                        "    result: y\n"
                                        "    then:\n"
                                        "      - {id: y, op: mul, args: [x, 2]}\n"
                                        "    else:\n"
                                        "      - {id: t, op: neg, args: [x]}\n"
                                        "      - {id: y, op: add, args: [t, 1]}\n",
                                        "[y]");

TEST(EagerExecutor, IfTakesThenBranch) {
  Model m = load(kIfModel);
  at::Tensor x = floats({1, 2, 3});
  EXPECT_TRUE(same(run_eager(m.graph, {x})[0], at::mul(x, 2)));
}

TEST(EagerExecutor, IfTakesElseBranch) {
  Model m = load(kIfModel);
  at::Tensor x = floats({-1, -2, 0.5});
  EXPECT_TRUE(same(run_eager(m.graph, {x})[0], at::add(at::neg(x), 1)));
}

TEST(EagerExecutor, IfOnHostScalarAndNumber) {
  // The predicate may be a host scalar from item, or a number written in the model.
  Model m = load(model_text("  x: {shape: [2], dtype: float32}\n  c: {shape: [], dtype: int64}\n",
                            "  - {id: k, op: item, args: [c]}\n"
                            "  - {op: if, args: [k], result: y, then: [{id: y, op: neg, args: [x]}], "
                            "else: [{id: y, op: mul, args: [x, 3]}]}\n"
                            "  - {op: if, args: [0.0], result: z, then: [{id: z, op: neg, args: [y]}], "
                            "else: [{id: z, op: add, args: [y, 1]}]}\n",
                            "[y, z]"));
  at::Tensor x = floats({1.5, -2});
  for (int64_t c : {0, 7}) {
    std::vector<at::Tensor> out = run_eager(m.graph, {x, at::scalar_tensor(c, at::TensorOptions().dtype(at::kLong))});
    at::Tensor y = c ? at::neg(x) : at::mul(x, 3);
    EXPECT_TRUE(same(out[0], y)) << "c=" << c;
    EXPECT_TRUE(same(out[1], at::add(y, 1))) << "c=" << c;
  }
}

TEST(EagerExecutor, OnValueSeesEveryValueIncludingTheIfResult) {
  Model m = load(kIfModel);
  std::vector<std::string> seen;
  EagerOptions options;
  options.on_value = [&](const Node& node, ValueId id, const RtValue& v) {
    EXPECT_FALSE(v.is_scalar());
    seen.push_back(op_name(node.op) + ":" + m.graph.name_of(id));
  };
  run_eager(m.graph, {floats({-1, -2, -3})}, options);
  EXPECT_EQ(seen, (std::vector<std::string>{"sum:s", "gt:p", "neg:t", "add:y.else", "if:y"}));
}

TEST(EagerExecutor, NonzeroBindsItsDim) {
  // The count is a data-dependent dim (u0) that later shapes may use.
  Model m = load(model_text("  m: {shape: [2, 3], dtype: bool}\n",
                            "  - {id: n, op: nonzero, args: [m]}\n"
                            "  - {id: z, op: full, shape: [u0, 2], value: 1.5}\n",
                            "[n, z]"));
  ValueId n = *m.graph.find_value("n");
  ASSERT_TRUE(m.graph.type(n).shape[0].is_symbol());
  const std::string sym = m.graph.type(n).shape[0].name();
  EXPECT_EQ(sym, "u0");

  at::Tensor mask = at::tensor(std::vector<uint8_t>{1, 0, 1, 1, 0, 0}).to(at::kBool).reshape({2, 3});
  std::vector<at::Tensor> inputs = {mask};
  DimBindings bindings = bind_dims(m.graph, inputs);
  std::vector<RtValue> env(m.graph.values.size());
  env[static_cast<size_t>(m.graph.inputs[0].value)] = RtValue::of(mask);
  run_block(m.graph, m.graph.body, env, bindings, {});
  EXPECT_EQ(bindings.at(sym), 3);
  EXPECT_TRUE(same(env[static_cast<size_t>(n)].tensor, at::nonzero(mask)));

  std::vector<at::Tensor> out = run_eager(m.graph, inputs);
  EXPECT_EQ(out[1].sizes(), at::IntArrayRef({3, 2}));
  EXPECT_TRUE(same(out[1], at::full({3, 2}, 1.5, at::TensorOptions().dtype(at::kFloat))));
}

TEST(EagerExecutor, ItemFeedsAScalarArgWithNumberPromotion) {
  Model m = load(model_text("  x: {shape: [3], dtype: float32}\n  i: {shape: [3], dtype: int32}\n"
                            "  c: {shape: [], dtype: float64}\n",
                            "  - {id: k, op: item, args: [c]}\n"
                            "  - {id: y, op: mul, args: [x, k]}\n"
                            "  - {id: z, op: add, args: [i, k]}\n"
                            "  - {id: n, op: sum, args: [i]}\n"
                            "  - {id: j, op: item, args: [n]}\n"
                            "  - {id: w, op: sub, args: [j, i]}\n",
                            "[y, z, w]"));
  at::Tensor x = floats({1, 2, 3});
  at::Tensor i = at::tensor(std::vector<int32_t>{4, 5, 6});
  at::Tensor c = at::scalar_tensor(2.5, at::TensorOptions().dtype(at::kDouble));
  std::vector<at::Tensor> out = run_eager(m.graph, {x, i, c});
  // A float host number keeps float32 float32 and turns int32 into the default float type.
  EXPECT_TRUE(same(out[0], at::mul(x, 2.5)));
  EXPECT_EQ(out[1].scalar_type(), at::kFloat);
  EXPECT_TRUE(same(out[1], at::add(i, 2.5)));
  // An int host number keeps int32 int32 (it does not widen to int64).
  EXPECT_EQ(out[2].scalar_type(), at::kInt);
  EXPECT_TRUE(same(out[2], at::tensor(std::vector<int32_t>{11, 10, 9})));
}

TEST(EagerExecutor, ScalarArgsPromoteAsPythonNumbers) {
  Model m = load(model_text("  h: {shape: [2], dtype: float16}\n  b: {shape: [2], dtype: bool}\n"
                            "  i: {shape: [2], dtype: int8}\n  s: {shape: [], dtype: float64}\n",
                            "  - {id: y1, op: add, args: [h, 2.5]}\n"
                            "  - {id: y2, op: add, args: [b, 3]}\n"
                            "  - {id: y3, op: mul, args: [i, true]}\n"
                            "  - {id: y4, op: maximum, args: [i, 1.5]}\n"
                            "  - {id: y5, op: add, args: [h, s]}\n"
                            "  - {id: y6, op: where, args: [b, h, 0.5]}\n",
                            "[y1, y2, y3, y4, y5, y6]"));
  std::vector<at::Tensor> out = run_eager(m.graph, make_inputs(m));
  EXPECT_EQ(out[0].scalar_type(), at::kHalf);
  EXPECT_EQ(out[1].scalar_type(), at::kLong);
  EXPECT_EQ(out[2].scalar_type(), at::kChar);
  EXPECT_EQ(out[3].scalar_type(), at::kFloat);
  EXPECT_EQ(out[4].scalar_type(), at::kHalf);  // a 0-d tensor ranks below a dimensioned one
  EXPECT_EQ(out[5].scalar_type(), at::kHalf);
  for (size_t k = 0; k < out.size(); ++k) EXPECT_EQ(from_aten(out[k].scalar_type()), m.graph.type(m.graph.outputs[k]).dtype);
}

TEST(EagerExecutor, InPlaceOpMutatesTheCallersTensorAndItsViews) {
  Model m = load(model_text("  x: {shape: [2, 2], dtype: float32}\n",
                            "  - {id: v, op: reshape, args: [x], shape: [4]}\n"
                            "  - {op: add_, args: [x, 1.0]}\n"
                            "  - {id: y, op: mul, args: [x, 2]}\n",
                            "[y, v, x]"));
  at::Tensor x = floats({1, 2, 3, 4}).reshape({2, 2});
  at::Tensor before = x.clone();
  const void* storage = x.data_ptr();
  std::vector<at::Tensor> out = run_eager(m.graph, {x});
  EXPECT_TRUE(same(x, at::add(before, 1.0)));  // the caller's tensor changed
  EXPECT_TRUE(same(out[0], at::mul(at::add(before, 1.0), 2)));
  EXPECT_TRUE(same(out[1], at::add(before, 1.0).reshape({4})));  // a view taken before sees it too
  EXPECT_EQ(out[2].data_ptr(), storage);                         // add_ returns self itself
}

TEST(EagerExecutor, BatchNormTrainingUpdatesRunningStats) {
  Model m = load(model_text("  x: {shape: [4, 3, 2], dtype: float32}\n",
                            "  - {id: y, op: batch_norm, args: [x, w, b, rm, rv], training: true, momentum: 0.2}\n",
                            "[y]",
                            "params:\n  w: {shape: [3], dtype: float32}\n  b: {shape: [3], dtype: float32}\n"
                            "  rm: {shape: [3], dtype: float32}\n"
                            "  rv: {shape: [3], dtype: float32, values: {dist: uniform, low: 0.5, high: 2.0}}\n"));
  std::vector<at::Tensor> in = make_inputs(m);
  std::vector<at::Tensor> ref;
  for (const auto& t : in) ref.push_back(t.clone());
  at::Tensor rm_before = in[3].clone();
  std::vector<at::Tensor> out = run_eager(m.graph, in);
  at::Tensor want = at::batch_norm(ref[0], ref[1], ref[2], ref[3], ref[4], true, 0.2, 1e-5, true);
  EXPECT_TRUE(same(out[0], want));
  EXPECT_TRUE(same(in[3], ref[3]));  // running_mean, updated in place like the reference's
  EXPECT_TRUE(same(in[4], ref[4]));  // running_var
  EXPECT_FALSE(at::equal(in[3], rm_before));
}

TEST(EagerExecutor, PrintWritesMessageAndValuesToTheSink) {
  Model m = load(model_text("  x: {shape: [2], dtype: float32, values: {dist: const, value: 1.5}}\n"
                            "  big: {shape: [8], dtype: int64, values: {dist: const, value: 3}}\n",
                            "  - {id: s, op: sum, args: [x]}\n"
                            "  - {id: k, op: item, args: [s]}\n"
                            "  - {op: print, args: [x, k, big, 7], message: step}\n"
                            "  - {op: print, args: [s]}\n"
                            "  - {id: y, op: neg, args: [x]}\n",
                            "[y]"));
  std::ostringstream sink;
  EagerOptions options;
  options.print_sink = &sink;
  run_eager(m.graph, make_inputs(m), options);
  EXPECT_EQ(sink.str(),
            "step x=float32[2] [1.5, 1.5] k=3.0 big=int64[8] [3, 3, 3, 3, 3, 3, ...] 7\n"
            "s=float32[] [3]\n");
  // No sink: print is a no-op.
  EXPECT_NO_THROW(run_eager(m.graph, make_inputs(m)));
}

TEST(EagerExecutor, DropoutFollowsTheGlobalSeed) {
  Model m = load(model_text("  x: {shape: [64], dtype: float32}\n", "  - {id: y, op: dropout, args: [x], p: 0.5}\n", "[y]"));
  std::vector<at::Tensor> in = make_inputs(m);
  at::manual_seed(42);
  at::Tensor a = run_eager(m.graph, in)[0];
  at::manual_seed(42);
  at::Tensor b = run_eager(m.graph, in)[0];
  at::manual_seed(42);
  at::Tensor want = at::dropout(in[0], 0.5, true);
  at::manual_seed(43);
  at::Tensor other = run_eager(m.graph, in)[0];
  EXPECT_TRUE(same(a, b));
  EXPECT_TRUE(same(a, want));
  EXPECT_FALSE(at::equal(a, other));
}

// The line and column of the first flow-map node containing `needle` in `text` (1-based).
std::pair<int, int> position_of(const std::string& text, const std::string& needle) {
  size_t at = text.find(needle);
  size_t brace = text.rfind('{', at);
  size_t line_start = text.rfind('\n', brace) + 1;
  int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(brace), '\n'));
  return {line, static_cast<int>(brace - line_start) + 1};
}

TEST(EagerExecutor, RuntimeFailureIsOpErrorWithLocation) {
  const std::string text = model_text("  i: {shape: [3], dtype: int32}\n  j: {shape: [3], dtype: int32}\n",
                                      "  - {id: s, op: sum, args: [i]}\n"
                                      "  - {id: y, op: remainder, args: [i, j]}\n",
                                      "[y]");
  Model m = load(text);
  at::Tensor i = at::tensor(std::vector<int32_t>{1, 2, 3});
  at::Tensor j = at::tensor(std::vector<int32_t>{1, 0, 2});
  auto [line, col] = position_of(text, "op: remainder");
  try {
    run_eager(m.graph, {i, j});
    FAIL() << "expected an OpError";
  } catch (const OpError& e) {
    EXPECT_EQ(e.op(), "remainder");
    EXPECT_EQ(e.loc().line, line);
    EXPECT_EQ(e.loc().col, col);
    std::string prefix = "test.yaml:" + std::to_string(line) + ":" + std::to_string(col) + ": remainder: ";
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
    EXPECT_NE(e.message().find("ZeroDivisionError"), std::string::npos) << e.message();
    // ATen's message, one line, without its C++ backtrace.
    EXPECT_EQ(e.message().find('\n'), std::string::npos) << e.message();
    EXPECT_EQ(e.message().find("Exception raised from"), std::string::npos) << e.message();
  }
}

TEST(EagerExecutor, NegativeIntegerPowerFromItemIsOpError) {
  // The exponent is a host number known only at run time.
  const std::string text = model_text("  i: {shape: [2], dtype: int64}\n  e: {shape: [2], dtype: int64}\n",
                                      "  - {id: s, op: sum, args: [e]}\n"
                                      "  - {id: k, op: item, args: [s]}\n"
                                      "  - {id: y, op: pow, args: [i, k]}\n",
                                      "[y]");
  Model m = load(text);
  at::Tensor i = at::tensor(std::vector<int64_t>{2, 3});
  EXPECT_TRUE(same(run_eager(m.graph, {i, at::tensor(std::vector<int64_t>{1, 1})})[0], at::mul(i, i)));
  try {
    run_eager(m.graph, {i, at::tensor(std::vector<int64_t>{1, -3})});
    FAIL() << "expected an OpError";
  } catch (const OpError& e) {
    EXPECT_EQ(e.loc().line, position_of(text, "op: pow").first);
    EXPECT_NE(e.message().find("negative integer powers"), std::string::npos) << e.message();
  }
}

TEST(EagerExecutor, BindDimsRejectsInputsThatContradictTheGraph) {
  Model m = load(model_text("  x: {shape: [B, 3], dtype: float32}\n  y: {shape: [B], dtype: float32}\n",
                            "  - {id: z, op: sum, args: [x]}\n", "[z]", "dims: {B: [1, 8]}\n"));
  auto f = [](std::vector<int64_t> s) { return at::ones(s, at::TensorOptions().dtype(at::kFloat)); };
  EXPECT_EQ(bind_dims(m.graph, {f({4, 3}), f({4})}).at("B"), 4);
  auto message = [&](std::vector<at::Tensor> in) {
    try {
      bind_dims(m.graph, in);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({f({4, 3}), f({5})}).find("dim B is 4 from 'x' dim 0 but 5 from 'y' dim 0"), std::string::npos);
  EXPECT_NE(message({f({4, 2}), f({4})}).find("'x' dim 1 has size 2, expected 3"), std::string::npos);
  EXPECT_NE(message({f({4}), f({4})}).find("'x' has 1 dims, expected 2"), std::string::npos);
  EXPECT_NE(message({f({4, 3})}).find("takes 2 tensors"), std::string::npos);
  EXPECT_THROW(run_eager(m.graph, {f({4, 3}), f({5})}), std::invalid_argument);
}

TEST(EagerExecutor, GraphWithoutInputsCreatesOnTheOptionsDevice) {
  Model m = load(model_text("", "  - {id: y, op: full, shape: [2], value: 4}\n", "[y]"));
  std::vector<at::Tensor> out = run_eager(m.graph, {});
  EXPECT_TRUE(same(out[0], at::full({2}, 4, at::TensorOptions().dtype(at::kLong))));
  EXPECT_TRUE(out[0].device().is_cpu());
}

TEST(EagerExecutor, RunsOnTheInputsDevice) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  // Wrapped numbers, full and the if predicate must all follow the inputs onto the GPU.
  Model m = load(model_text("  x: {shape: [2, 3], dtype: float32}\n",
                            "  - {id: a, op: maximum, args: [x, 0.5]}\n"
                            "  - {id: f, op: full, shape: [2, 3], value: 2.0}\n"
                            "  - {id: y, op: mul, args: [a, f]}\n"
                            "  - {id: s, op: sum, args: [y]}\n"
                            "  - {id: k, op: item, args: [s]}\n"
                            "  - {id: p, op: gt, args: [y, 1.5]}\n"
                            "  - {op: if, args: [k], result: z, then: [{id: z, op: where, args: [p, y, 1.0]}], "
                            "else: [{id: z, op: neg, args: [y]}]}\n",
                            "[z, f]"));
  at::Tensor x = make_inputs(m)[0];
  std::vector<at::Tensor> cpu = run_eager(m.graph, {x});
  std::vector<at::Tensor> gpu = run_eager(m.graph, {x.cuda()});
  ASSERT_TRUE(gpu[0].is_cuda());
  ASSERT_TRUE(gpu[1].is_cuda());
  EXPECT_TRUE(same(gpu[0].cpu(), cpu[0]));
  EXPECT_TRUE(same(gpu[1].cpu(), cpu[1]));
}

}  // namespace
}  // namespace gbc
