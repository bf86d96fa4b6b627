// The nnc backend against the eager reference on small models: NNC must fuse what it can, match
// eager, and report what it did (fusion groups, fallbacks, recompiles), while warm-ups leave the
// caller's inputs, the running stats and the RNG alone. NNC interprets its kernels without LLVM
// (about 1800x slower than eager), so every shape here is tiny.
#include "compiler/backends/nnc_backend.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>

#include <sstream>

#include "compiler/aten/aten_convert.h"
#include "compiler/aten/eager_executor.h"
#include "compiler/backends/torchscript_emitter.h"
#include "harness/model/model_loader.h"
#include "tests/support/load_model.h"

namespace gbc {
namespace {

using testing::load;

// Inputs in graph order for the given dim sizes, from a private generator (the global one is the
// dropout test's).
std::vector<at::Tensor> make_inputs(const Graph& g, const DimBindings& dims, uint64_t seed = 7) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<at::Tensor> out;
  for (const auto& in : g.inputs) {
    const ValueType& t = g.type(in.value);
    std::vector<int64_t> shape = concrete_shape(t.shape, dims);
    if (is_floating(t.dtype))
      out.push_back(at::randn(shape, gen, at::TensorOptions().dtype(at::kFloat)).to(to_aten(t.dtype)));
    else
      out.push_back(at::randint(-3, 4, shape, gen, at::TensorOptions().dtype(at::kLong)).to(to_aten(t.dtype)));
  }
  return out;
}

std::vector<at::Tensor> clones(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  for (const auto& t : ts) out.push_back(t.clone());
  return out;
}

// torch.testing.assert_close's float32 tolerance; exact for integers and bools.
::testing::AssertionResult close(const at::Tensor& got, const at::Tensor& want) {
  if (got.scalar_type() != want.scalar_type())
    return ::testing::AssertionFailure() << "dtype " << got.scalar_type() << " vs " << want.scalar_type();
  if (got.sizes() != want.sizes()) return ::testing::AssertionFailure() << "sizes " << got.sizes() << " vs " << want.sizes();
  bool ok = c10::isFloatingType(got.scalar_type()) ? at::allclose(got, want, 1.3e-6, 1e-5, /*equal_nan=*/true)
                                                   : at::equal(got, want);
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "values differ:\n" << got << "\nvs eager\n" << want;
}

void expect_all_close(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(close(got[i], want[i])) << what << ", output " << i;
}

int count_events(const BackendStats& s, const std::string& code) {
  int n = 0;
  for (const auto& e : s.events) n += e.code == code ? 1 : 0;
  return n;
}

std::string events_str(const BackendStats& s) {
  std::string out;
  for (const auto& e : s.events) out += e.code + " " + e.loc.str() + " " + e.message + "\n";
  return out;
}

// Runs nnc and eager on copies of the same inputs and checks that the outputs agree.
std::vector<at::Tensor> run_both(Backend& nnc, const Graph& g, const std::vector<at::Tensor>& inputs,
                                 const std::string& what) {
  std::vector<at::Tensor> want = run_eager(g, clones(inputs));
  std::vector<at::Tensor> got = nnc.run(clones(inputs));
  expect_all_close(got, want, what);
  return got;
}

// Fusible end to end: NNC makes one group of it.
std::string elementwise_model() {
  return "format: gbcheck/v1\nname: chain\ndims: {B: [1, 8]}\n"
         "inputs:\n  x: {shape: [B, 8], dtype: float32}\n  w: {shape: [8], dtype: float32}\n"
         "graph:\n"
         "  - {id: a, op: add, args: [x, w]}\n"
         "  - {id: b, op: relu, args: [a]}\n"
         "  - {id: c, op: mul, args: [b, 2.5]}\n"
         "  - {id: d, op: sigmoid, args: [c]}\n"
         "  - {id: e, op: sub, args: [1, d]}\n"
         "  - {id: f, op: tanh, args: [e]}\n"
         "outputs: [f]\n";
}

TEST(NncBackend, ElementwiseChainFusesAndMatchesEager) {
  Model m = load(elementwise_model());
  auto nnc = make_nnc_backend();
  nnc->prepare(m.graph, BackendOptions{});
  run_both(*nnc, m.graph, make_inputs(m.graph, {{"B", 4}}), "B=4");
  run_both(*nnc, m.graph, make_inputs(m.graph, {{"B", 4}}, 11), "B=4 again");
  const BackendStats& s = nnc->stats();
  EXPECT_GE(s.fusion_groups, 1);
  EXPECT_EQ(s.fallbacks, 0) << events_str(s);
  EXPECT_EQ(s.graph_breaks, 0);
  EXPECT_EQ(s.graphs, 1);
  EXPECT_GT(s.compile_ms, 0.0);
}

TEST(NncBackend, MlpExampleMatchesEager) {
  Model m = load_model_file(std::string(GBCHECK_SOURCE_DIR) + "/corpus/examples/mlp.yaml");
  auto nnc = make_nnc_backend();
  nnc->prepare(m.graph, BackendOptions{});
  run_both(*nnc, m.graph, make_inputs(m.graph, {{"B", 3}}), "B=3");
  EXPECT_EQ(nnc->stats().extern_calls, 1);
}

// Imported models' generic ATen ops run in NNC's TorchScript as eager runs them.
TEST(NncBackend, GenericAtenOpsMatchEager) {
  Model m = load_model_file(std::string(GBCHECK_SOURCE_DIR) + "/tests/data/generic_ops.yaml");
  auto nnc = make_nnc_backend();
  nnc->prepare(m.graph, BackendOptions{});
  run_both(*nnc, m.graph, make_inputs(m.graph, {}), "generic ops");
}

TEST(NncBackend, SymbolicDimVaryingBetweenCallsStaysFused) {
  Model m = load(elementwise_model());
  for (const char* dynamic : {"auto", "true", "false"}) {
    auto nnc = make_nnc_backend();
    BackendOptions opt;
    opt.dynamic = dynamic;
    nnc->prepare(m.graph, opt);
    for (int64_t b : {2, 5, 1, 3, 5})
      run_both(*nnc, m.graph, make_inputs(m.graph, {{"B", b}}), std::string("dynamic=") + dynamic + " B=" + std::to_string(b));
    const BackendStats& s = nnc->stats();
    // Every call ran fused kernels: new shapes are recompiles (a static strategy specializes per
    // shape), never fallbacks.
    EXPECT_EQ(s.fallbacks, 0) << dynamic << "\n" << events_str(s);
    EXPECT_GE(s.fusion_groups, 1) << dynamic;
    // true: one shape-generic kernel; auto: static for B=2, shape-generic from B=5 on; false: one
    // static kernel per shape (B=5, 1 and 3 after B=2).
    int expected_recompiles = std::string(dynamic) == "true" ? 0 : std::string(dynamic) == "auto" ? 1 : 3;
    EXPECT_EQ(s.recompiles, expected_recompiles) << dynamic << "\n" << events_str(s);
    EXPECT_EQ(s.compiles, expected_recompiles + 1) << dynamic;  // the first compile is not a recompile
  }
}

TEST(NncBackend, StridedInputsAreWarmedUpWithTheirOwnLayout) {
  // A transposed x and a w sliced out of a bigger buffer: the warm-up copies keep strides and the
  // storage offset, so the specialization compiled for them is the one the real call uses.
  Model m = load(elementwise_model());
  auto nnc = make_nnc_backend();
  nnc->prepare(m.graph, BackendOptions{});
  run_both(*nnc, m.graph, make_inputs(m.graph, {{"B", 3}}), "contiguous");
  std::vector<at::Tensor> in = make_inputs(m.graph, {{"B", 3}}, 5);
  at::Tensor x = in[0].t().contiguous().t();
  at::Tensor w = at::cat({in[1], in[1]}).slice(0, 3, 11);
  ASSERT_FALSE(x.is_contiguous());
  ASSERT_EQ(w.storage_offset(), 3);
  std::vector<at::Tensor> want = run_eager(m.graph, {x.clone(), w.clone()});
  std::vector<at::Tensor> got = nnc->run({x, w});
  expect_all_close(got, want, "strided");
  EXPECT_EQ(nnc->stats().fallbacks, 0) << events_str(nnc->stats());
  EXPECT_EQ(nnc->stats().recompiles, 1) << events_str(nnc->stats());
}

TEST(NncBackend, ComputationErrorsPropagateAsEagersOpError) {
  // Integer remainder by zero raises in ATen, under TorchScript as in eager: the model's error, not
  // a failure of nnc.
  Model m = load("format: gbcheck/v1\nname: t\n"
                 "inputs:\n  i: {shape: [3], dtype: int32}\n  z: {shape: [3], dtype: int32}\n"
                 "graph:\n  - {id: a, op: add, args: [i, 1]}\n  - {id: r, op: remainder, args: [a, z]}\n"
                 "outputs: [r]\n");
  auto nnc = make_nnc_backend();
  nnc->prepare(m.graph, BackendOptions{});
  at::Tensor i = at::tensor({1, 2, 3}, at::TensorOptions().dtype(at::kInt));
  at::Tensor z = at::tensor({1, 0, 2}, at::TensorOptions().dtype(at::kInt));
  try {
    nnc->run({i, z});
    FAIL() << "expected OpError";
  } catch (const OpError& e) {
    EXPECT_EQ(e.op(), "remainder");
  }
  EXPECT_EQ(count_events(nnc->stats(), "FB105"), 0) << events_str(nnc->stats());
  // The same graph on valid inputs still runs compiled.
  at::Tensor ones = at::tensor({1, 3, 2}, at::TensorOptions().dtype(at::kInt));
  run_both(*nnc, m.graph, {i, ones}, "valid inputs");
  EXPECT_EQ(nnc->stats().fallbacks, count_events(nnc->stats(), "FB101")) << events_str(nnc->stats());
}

TEST(NncBackend, PrintIfItemAndNonzeroRunAndMatch) {
  Model m = load("format: gbcheck/v1\nname: t\n"
                 "inputs:\n  x: {shape: [6], dtype: float32}\n"
                 "graph:\n"
                 "  - {id: s, op: sum, args: [x]}\n"
                 "  - {id: v, op: item, args: [s]}\n"
                 "  - {id: p, op: gt, args: [s, 0]}\n"
                 "  - op: if\n"
                 "    args: [p]\n"
                 "    result: y\n"
                 "    then:\n"
                 "      - {id: t, op: mul, args: [x, v]}\n"
                 "      - {id: y, op: exp, args: [t]}\n"
                 "    else:\n"
                 "      - {id: n, op: neg, args: [x]}\n"
                 "      - {id: y, op: add, args: [n, 1]}\n"
                 "  - {op: print, args: [y, v], message: 'y is'}\n"
                 "  - {id: nz, op: nonzero, args: [x]}\n"
                 "  - {id: g, op: gt, args: [x, 0]}\n"
                 "  - {id: z, op: where, args: [g, y, 0.0]}\n"
                 "outputs: [y, nz, z]\n");
  auto nnc = make_nnc_backend();
  std::ostringstream prints;
  BackendOptions opt;
  opt.print_sink = &prints;
  nnc->prepare(m.graph, opt);
  at::Tensor pos = at::tensor({0.5f, -0.2f, 0.3f, 0.0f, 0.1f, 0.4f});
  at::Tensor neg = at::tensor({-0.5f, 0.2f, -0.3f, 0.0f, -0.1f, 0.4f});
  run_both(*nnc, m.graph, {pos}, "then branch");
  run_both(*nnc, m.graph, {neg}, "else branch");
  run_both(*nnc, m.graph, {pos}, "then branch again");
  // Warm-ups print nothing: three real calls, three lines starting with the message.
  std::string text = prints.str();
  size_t count = 0;
  for (size_t at = text.find("y is"); at != std::string::npos; at = text.find("y is", at + 1)) ++count;
  EXPECT_EQ(count, 3u) << text;
  EXPECT_EQ(nnc->stats().graph_breaks, 0);
}

TEST(NncBackend, GraphThatCannotFuseRecordsAFallback) {
  // layer_norm and var are not NNC ops, and no two fusible ops are adjacent.
  Model m = load("format: gbcheck/v1\nname: t\n"
                 "inputs:\n  x: {shape: [3, 4], dtype: float32}\n"
                 "graph:\n"
                 "  - {id: n, op: layer_norm, args: [x], normalized_shape: [4]}\n"
                 "  - {id: v, op: var, args: [n], dim: 1}\n"
                 "outputs: [v]\n");
  auto nnc = make_nnc_backend();
  nnc->prepare(m.graph, BackendOptions{});
  run_both(*nnc, m.graph, make_inputs(m.graph, {}), "unfusible");
  const BackendStats& s = nnc->stats();
  EXPECT_EQ(s.fusion_groups, 0);
  EXPECT_EQ(count_events(s, "FB101"), 1) << events_str(s);
  EXPECT_EQ(s.fallbacks, 1);
}

TEST(NncBackend, DataDependentSizesRunTheUnfusedFallback) {
  // nonzero's count changes with the values, so the kernel after it sees a shape its guard did
  // not profile: the executor runs the fallback path, unfused, and that must be reported.
  Model m = load("format: gbcheck/v1\nname: t\n"
                 "inputs:\n  x: {shape: [8], dtype: float32}\n"
                 "graph:\n"
                 "  - {id: nz, op: nonzero, args: [x]}\n"
                 "  - {id: f, op: to, args: [nz], dtype: float32}\n"
                 "  - {id: a, op: mul, args: [f, 2.0]}\n"
                 "  - {id: b, op: add, args: [a, 1.0]}\n"
                 "  - {id: y, op: exp, args: [b]}\n"
                 "outputs: [y]\n");
  auto nnc = make_nnc_backend();
  BackendOptions opt;
  opt.dynamic = "false";
  nnc->prepare(m.graph, opt);
  at::Tensor x = at::tensor({1.f, 0.f, 2.f, 0.f, 0.f, 3.f, 0.f, 0.f});
  at::Tensor x2 = at::tensor({1.f, 1.f, 2.f, 0.f, 4.f, 3.f, 0.f, 0.f});
  run_both(*nnc, m.graph, {x}, "three non-zeros");
  run_both(*nnc, m.graph, {x2}, "five non-zeros");
  const BackendStats& s = nnc->stats();
  EXPECT_GE(s.fusion_groups, 1);
  EXPECT_EQ(count_events(s, "FB102"), 1) << events_str(s);
}

TEST(NncBackend, WarmUpLeavesInputsStatsAndRngAlone) {
  // add_ mutates an input, batch_norm in training updates its running stats, dropout draws from
  // the global RNG: after one nnc call everything must look like after one eager call.
  Model m = load("format: gbcheck/v1\nname: t\n"
                 "inputs:\n  x: {shape: [4, 3], dtype: float32}\n"
                 "params:\n"
                 "  w: {shape: [3], dtype: float32}\n  b: {shape: [3], dtype: float32}\n"
                 "  rm: {shape: [3], dtype: float32}\n  rv: {shape: [3], dtype: float32, values: {dist: uniform, low: 0.5, high: 1.5}}\n"
                 "graph:\n"
                 "  - {id: bn, op: batch_norm, args: [x, w, b, rm, rv], training: true}\n"
                 "  - {id: d, op: dropout, args: [bn], p: 0.5}\n"
                 "  - {op: add_, args: [x, 1.0]}\n"
                 "  - {id: y, op: mul, args: [d, x]}\n"
                 "outputs: [y]\n");
  std::vector<at::Tensor> inputs = make_inputs(m.graph, {});
  inputs[4] = inputs[4].abs() + 0.5;  // a running variance is positive

  std::vector<at::Tensor> eager_in = clones(inputs);
  at::manual_seed(123);
  std::vector<at::Tensor> want = run_eager(m.graph, eager_in);

  auto nnc = make_nnc_backend();
  nnc->prepare(m.graph, BackendOptions{});
  std::vector<at::Tensor> nnc_in = clones(inputs);
  at::manual_seed(123);
  std::vector<at::Tensor> got = nnc->run(nnc_in);

  expect_all_close(got, want, "outputs");
  expect_all_close(nnc_in, eager_in, "inputs after the call (x += 1 once, running stats updated once)");
}

TEST(NncBackend, CustomKernelsRunAsTorchScriptOps) {
  Model m = load("format: gbcheck/v1\nname: t\n"
                 "inputs:\n  x: {shape: [2, 5], dtype: float32}\n  bias: {shape: [5], dtype: float32}\n"
                 "graph:\n"
                 "  - {id: a, op: custom, args: [x], name: scaled_tanh}\n"
                 "  - {id: b, op: custom, args: [a, bias], name: bias_relu}\n"
                 "  - {id: c, op: custom, args: [b], name: row_l2_normalize}\n"
                 "outputs: [c]\n");
  auto nnc = make_nnc_backend();
  nnc->prepare(m.graph, BackendOptions{});
  run_both(*nnc, m.graph, make_inputs(m.graph, {}), "custom kernels");
  EXPECT_EQ(count_events(nnc->stats(), "FB104"), 0) << events_str(nnc->stats());
}

TEST(NncBackend, GraphTorchScriptCannotExpressRunsEagerlyWithAFallback) {
  // N sizes nothing the function receives: there is no TorchScript for it. The loader refuses such
  // models, so the graph is edited after loading (a pass could produce one).
  Model m = load("format: gbcheck/v1\nname: t\ndims: {B: [1, 4], N: [1, 4]}\n"
                 "inputs:\n  x: {shape: [B], dtype: float32}\n"
                 "graph:\n  - {id: z, op: full, shape: [B], value: 0.5}\n  - {id: y, op: add, args: [x, 1]}\n"
                 "outputs: [y]\n");
  m.graph.body.nodes.front().attrs["shape"] = SymShape{DimExpr::symbol("N")};
  auto nnc = make_nnc_backend();
  nnc->prepare(m.graph, BackendOptions{});
  EXPECT_EQ(count_events(nnc->stats(), "FB103"), 1) << events_str(nnc->stats());
  EXPECT_EQ(nnc->stats().graphs, 0);
}

TEST(NncBackend, FuserSettingsAreRestoredAfterACall) {
  bool fuser = torch::jit::tensorExprFuserEnabled();
  bool reductions = torch::jit::texprReductionsEnabled();
  bool llvm = torch::jit::tensorexpr::getTEMustUseLLVMOnCPU();
  Model m = load(elementwise_model());
  auto nnc = make_nnc_backend();
  nnc->prepare(m.graph, BackendOptions{});
  nnc->run(make_inputs(m.graph, {{"B", 2}}));
  EXPECT_EQ(torch::jit::tensorExprFuserEnabled(), fuser);
  EXPECT_EQ(torch::jit::texprReductionsEnabled(), reductions);
  EXPECT_EQ(torch::jit::tensorexpr::getTEMustUseLLVMOnCPU(), llvm);
}

TEST(NncBackend, EmittedDtypeCodesAreAtensScalarTypes) {
  for (DType d : all_dtypes()) EXPECT_EQ(torchscript_dtype_code(d), static_cast<int>(to_aten(d))) << dtype_name(d);
}

TEST(BackendRegistry, EagerAndNnc) {
  const BackendInfo* eager = find_backend("eager");
  const BackendInfo* nnc = find_backend("nnc");
  ASSERT_NE(eager, nullptr);
  ASSERT_NE(nnc, nullptr);
  EXPECT_FALSE(eager->compiled);
  EXPECT_TRUE(nnc->compiled);
  EXPECT_EQ(make_backend("nnc")->name(), "nnc");
  EXPECT_EQ(make_backend("nope"), nullptr);

  Model m = load(elementwise_model());
  auto b = make_backend("eager");
  b->prepare(m.graph, BackendOptions{});
  std::vector<at::Tensor> in = make_inputs(m.graph, {{"B", 3}});
  expect_all_close(b->run(clones(in)), run_eager(m.graph, clones(in)), "eager backend");
  EXPECT_EQ(b->stats().events.size(), 0u);
}

TEST(NncBackend, FusesOnCudaWhenAvailable) {
  if (!at::hasCUDA()) GTEST_SKIP() << "no CUDA device";
  Model m = load(elementwise_model());
  auto nnc = make_nnc_backend();
  BackendOptions opt;
  opt.device = "cuda";
  nnc->prepare(m.graph, opt);
  for (int64_t b : {2, 5}) {
    std::vector<at::Tensor> in = make_inputs(m.graph, {{"B", b}});
    for (auto& t : in) t = t.cuda();
    std::vector<at::Tensor> want = run_eager(m.graph, clones(in));
    std::vector<at::Tensor> got = nnc->run(clones(in));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(close(got[i].cpu(), want[i].cpu()));
  }
  EXPECT_GE(nnc->stats().fusion_groups, 1);
  EXPECT_EQ(nnc->stats().fallbacks, 0) << events_str(nnc->stats());
}

}  // namespace
}  // namespace gbc
