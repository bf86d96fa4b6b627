// The ladder end to end: every corpus/examples model passes trace, decomp, gbc-interp and gbc
// against eager through the check runner, each tier reports what it compiled, and a fused kernel
// whose module the host compiler rejects is a recorded fallback (FB001): its nodes run on ATen,
// compute what eager computes with the same bits on every call, and fail a check that expects no
// fallback; float-to-integer casts of NaN, infinities and out-of-range values give eager's
// integers in generated code; and no result shares the storage of an input or of another result
// that an in-place op after a graph break writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "compiler/backends/gbc_backend.h"
#include "oracles/determinism_oracle.h"
#include "tests/runtime/runtime_test_util.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;
using test::events_of;
using test::expect_matches_eager;
using test::inputs_for;
using test::load;
using test::options_of;

std::vector<std::string> corpus_models() {
  std::vector<std::string> paths;
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(GBCHECK_SOURCE_DIR) / "corpus/examples"))
    if (e.path().extension() == ".yaml") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(Ladder, EveryCorpusModelPassesEachTierAgainstEager) {
  const std::vector<std::string> paths = corpus_models();
  ASSERT_GE(paths.size(), 6u);
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    Model model = load_model_file(path);
    RunOptions opt = run_options_from_model(model);
    opt.backends = {"trace", "decomp", "gbc-interp", "gbc"};
    opt.max_shrink_tries = 0;
    CheckReport report = run_check(model, opt);
    EXPECT_TRUE(report.eager_error.empty()) << report.eager_error;
    ASSERT_EQ(report.backends.size(), 4u);
    for (const BackendReport& b : report.backends) {
      SCOPED_TRACE(b.backend);
      EXPECT_TRUE(b.pass());
      EXPECT_EQ(b.cases_run, model.check.cases);
      for (const std::string& f : b.expectation_failures) ADD_FAILURE() << f;
      for (const CaseFailure& f : b.failures)
        ADD_FAILURE() << "case " << f.index << ": " << f.error << (f.outputs.empty() ? "" : " " + f.outputs[0].detail);
      EXPECT_EQ(b.stats.graph_breaks, 0);
      EXPECT_EQ(b.stats.fallbacks, 0);
      EXPECT_GE(b.stats.compiles, 1);
      EXPECT_EQ(b.stats.recompiles, b.stats.compiles - 1);  // one graph per model
      const bool fuses = b.backend == "gbc" || b.backend == "gbc-interp";
      EXPECT_EQ(b.stats.fusion_groups > 0, fuses);
    }
  }
}

const char* kChain = R"(format: gbcheck/v1
name: chain
inputs:
  x: {shape: [8, 5]}
  z: {shape: [8, 5]}
graph:
  - {id: a, op: exp, args: [x]}
  - {id: b, op: mul, args: [a, z]}
  - {id: y, op: tanh, args: [b]}
outputs: [y]
check:
  expect: {fallbacks: 0}
)";

// A flag every C++ compiler rejects: the module fails to compile through the real compile path.
const std::vector<std::string> kRejectedFlag = {"-fgbcheck-test-rejected-flag"};

// Found by the fuzzer: GCC folded (float)(int64_t)x into truncf(x), so remainder(to(NaN, int64), 1.0)
// was NaN in gbc's generated code and -0 in eager.
TEST(Casts, FloatToIntegerOfNonFiniteAndOutOfRangeValuesGivesEagersIntegers) {
  Model model = load(R"(format: gbcheck/v1
name: casts
inputs:
  x: {shape: [6]}
graph:
  - {id: l, op: to, args: [x], dtype: int64}
  - {id: r, op: remainder, args: [l, 1.0]}
  - {id: i, op: to, args: [x], dtype: int32}
  - {id: b, op: to, args: [x], dtype: int8}
  - {id: u, op: to, args: [x], dtype: uint8}
outputs: [l, r, i, b, u]
)");
  const at::Tensor x = at::tensor(std::vector<float>{NAN, INFINITY, -INFINITY, 3e9f, -1e19f, -2.5f});
  const std::vector<at::Tensor> expected = run_eager(model.graph, {x.clone()});
  for (const char* tier : {"gbc", "gbc-interp"}) {
    std::unique_ptr<Backend> backend = test::prepared(tier, model, options_of(model));
    const std::vector<at::Tensor> actual = backend->run({x.clone()});
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t o = 0; o < expected.size(); ++o)
      EXPECT_TRUE(at::equal(actual[o], expected[o])) << tier << ": output " << o << "\n" << actual[o] << "\n" << expected[o];
  }
}

// Found by the fuzzer (`gbc divergence fp64,tolerance [div]`, seed 7400401): div(x, 1) is x, and
// the compiled graph before a graph break returned x itself as the result; the break's mul_(x, 0)
// then zeroed the result too. Eager's div gives a new tensor, and so must every compiled path.
TEST(Aliasing, AResultNeverSharesTheStorageOfAnInputALaterInPlaceOpWrites) {
  Model model = load(R"(format: gbcheck/v1
name: returned_identity
inputs:
  x: {shape: [4]}
  z: {shape: [4]}
graph:
  - {id: d, op: div, args: [x, 1.0]}
  - {id: e, op: exp, args: [x]}
  - {id: e1, op: mul, args: [e, 1.0]}
  - {id: e2, op: mul, args: [e, 1.0]}
  - {op: mul_, args: [x, z]}
  - {op: add_, args: [e1, 1.0]}
outputs: [d, e1, e2, x]
)");
  const std::vector<at::Tensor> inputs = {at::tensor(std::vector<float>{1.0f, -2.0f, 3.0f, 0.5f}), at::zeros({4})};
  for (const char* tier : {"gbc", "gbc-interp"})
    expect_matches_eager(*test::prepared(tier, model, options_of(model)), model.graph, inputs);
}

// Found by the fuzzer (`gbc divergence fp64,tolerance [amin]`, seed 8100868): ATen's `to` of the
// dtype a tensor has returns the tensor itself, so add_ into a slice of it writes the graph input,
// and amin of the input sees the write. gbc computed the cast as a copy. Constant folding now
// makes the cast its input, and without that pass the cast runs on ATen, as a view op does.
TEST(Aliasing, ACastToTheDtypeAnInputHasIsTheInputItself) {
  Model model = load(R"(format: gbcheck/v1
name: same_dtype_cast
inputs:
  x: {shape: [2, 3]}
graph:
  - {id: c, op: to, args: [x], dtype: float32}
  - {id: v, op: slice, args: [c], dim: 1, start: 0, end: 2}
  - {op: add_, args: [v, 1.0]}
  - {id: m, op: amin, args: [x]}
  - {id: w, op: to, args: [x], dtype: float64}
  - {op: add_, args: [w, 1.0]}
outputs: [m, c, w]
)");
  const std::vector<at::Tensor> inputs = {at::tensor(std::vector<float>{1.0f, -2.0f, 3.0f, 0.5f, 4.0f, -1.0f}).reshape({2, 3})};
  for (const char* tier : {"gbc", "gbc-interp"}) {
    for (bool fold : {true, false}) {
      SCOPED_TRACE(std::string(tier) + (fold ? "" : ", constant_fold disabled"));
      BackendOptions o = options_of(model);
      if (!fold) o.disabled_passes = {"constant_fold"};
      expect_matches_eager(*test::prepared(tier, model, o), model.graph, inputs);
    }
  }
}

// Found by the fuzzer (`gbc divergence fp64,tolerance [mean]`, seed 7401394): a training
// batch_norm over dims of symbolic size was not decomposed and ran on ATen, whose float32 kernel
// overflows on a contiguous input holding 3.04e38 (it gives 0s) where eager's transposed input took
// its float64 path. Decomposed with the count summed at run time, gbc's statistics are float64 for
// every layout and every binding of the dims.
TEST(GeneratedCode, TrainingBatchNormOverSymbolicDimsKeepsFloat64Statistics) {
  Model model = load(R"(format: gbcheck/v1
name: batch_norm_dynamic
dims: {M: [2, 6], N: [2, 4]}
inputs:
  x: {shape: [1, M, 2, N]}
params:
  w: {shape: [M], values: {dist: const, value: 1.0}}
  b: {shape: [M], values: {dist: const, value: 0.0}}
  rm: {shape: [M], values: {dist: const, value: 0.0}}
  rv: {shape: [M], values: {dist: const, value: 1.0}}
graph:
  - {id: y, op: batch_norm, args: [x, w, b, rm, rv], training: true}
outputs: [y]
check: {dynamic: true}
)");
  at::Tensor x = at::zeros({1, 2, 2, 2});
  x[0][1][1][0] = 3.0384491665593022e+38;
  const at::Tensor want = at::tensor({-0.57735026f, -0.57735026f, 1.7320508f, -0.57735026f});
  for (const char* tier : {"gbc", "gbc-interp"}) {
    std::unique_ptr<Backend> backend = test::prepared(tier, model, options_of(model));
    const std::vector<at::Tensor> in = {x, at::ones({2}), at::zeros({2}), at::zeros({2}), at::ones({2})};
    const at::Tensor y = backend->run(test::clones(in))[0];
    EXPECT_TRUE(at::allclose(y[0][1].reshape({4}), want, 1e-5, 1e-6)) << tier << "\n" << y[0][1];
    EXPECT_TRUE(at::allclose(y[0][0], at::zeros({2, 2}))) << tier;
    EXPECT_EQ(backend->stats().fallbacks, 0) << tier << ": the batch_norm runs in gbc, not on ATen";
  }
}

// Found by the fuzzer as a `determinism` failure of gbc (`gbc divergence determinism [log1p]`,
// docs/fuzzing.md): GCC evaluates a libm call whose argument it can prove constant (here the fill
// of a `where`, 2.5) with MPFR, correctly rounded, while glibc's log1pf(2.5f) at run time is one
// ulp off; when a first call ran in the interpreter and later ones natively, two calls on the same
// inputs differed. Every value must give the same bits wherever it comes from, in generated code
// and in the interpreter.
TEST(GeneratedCode, LibmCallsGiveTheSameBitsForAConstantAsForData) {
  Model model = load(R"(format: gbcheck/v1
name: libm_constants
inputs:
  x: {shape: [64]}
  xd: {shape: [64], dtype: float64}
  m: {shape: [64], dtype: bool}
graph:
  - {id: a, op: where, args: [m, x, 2.5]}
  - {id: ad, op: where, args: [m, xd, 2.5]}
  - {id: l, op: log1p, args: [a]}
  - {id: e, op: expm1, args: [a]}
  - {id: s, op: sin, args: [a]}
  - {id: c, op: cos, args: [a]}
  - {id: p, op: pow, args: [a, 1.7]}
  - {id: ld, op: log1p, args: [ad]}
  - {id: ed, op: exp, args: [ad]}
  - {id: td, op: tanh, args: [ad]}
  - {id: gd, op: gelu, args: [ad]}
outputs: [l, e, s, c, p, ld, ed, td, gd]
)");
  // Every element's operand is 2.5: from the data where m is true, from the fill elsewhere.
  const std::vector<at::Tensor> in = {at::full({64}, 2.5f), at::full({64}, 2.5, at::kDouble),
                                      at::arange(64).remainder(2).to(at::kBool)};
  std::vector<at::Tensor> native;
  for (const char* tier : {"gbc", "gbc-interp"}) {
    std::unique_ptr<Backend> backend = test::prepared(tier, model, options_of(model));
    const std::vector<at::Tensor> out = backend->run(test::clones(in));
    ASSERT_EQ(out.size(), 9u);
    for (size_t o = 0; o < out.size(); ++o)
      EXPECT_EQ(bitwise_compare(out[o], at::full_like(out[o], out[o][0].item())).differing, 0)
          << tier << ": output " << model.graph.name_of(model.graph.outputs[o]) << "\n" << out[o];
    if (native.empty()) {
      native = out;
      continue;
    }
    for (size_t o = 0; o < out.size(); ++o)
      EXPECT_TRUE(bitwise_compare(out[o], native[o]).equal) << "gbc vs gbc-interp: output " << model.graph.name_of(model.graph.outputs[o]);
  }
}

// Reductions reading inputs that every reduced dim broadcasts: a per-channel mean in a sum over H
// and W, a per-(n, c) gain and a per-row bias in a softmax over W. The runtime specializes them to
// one load per row (specialize.h, BufferSpec::per_row) whatever their strides: contiguous rows,
// strided ones (a dim broadcast among the kept dims), and every other element of a wider tensor.
TEST(GeneratedCode, ReductionInputsConstantAlongTheRowMatchEager) {
  Model model = load(R"(format: gbcheck/v1
name: per_row_inputs
dims: {N: 3, C: 5, H: 7, W: 37}
inputs:
  x: {shape: [N, C, H, W]}
  m: {shape: [1, C, 1, 1]}
  g: {shape: [N, C, 1, 1]}
  b: {shape: [N, C, H, 1]}
graph:
  - {id: d, op: sub, args: [x, m]}
  - {id: sq, op: mul, args: [d, d]}
  - {id: v, op: sum, args: [sq], dim: [2, 3]}
  - {id: s, op: mul, args: [x, g]}
  - {id: t, op: add, args: [s, b]}
  - {id: p, op: softmax, args: [t], dim: -1}
  - {id: e, op: tanh, args: [d]}
  - {id: q, op: mul, args: [e, g]}
  - {id: w, op: sum, args: [q], dim: -1}
outputs: [v, p, w]
)");
  std::unique_ptr<Backend> backend = test::prepared("gbc", model, options_of(model));
  const DimBindings dims = {{"N", 3}, {"C", 5}, {"H", 7}, {"W", 37}};
  for (uint64_t seed : {1, 2}) expect_matches_eager(*backend, model.graph, inputs_for(model.graph, dims, seed));
  std::vector<at::Tensor> in = inputs_for(model.graph, dims, 3);
  in[2] = at::randn({3, 10, 1, 1}).slice(1, 0, 10, 2);  // g: every other channel of a wider tensor
  in[3] = at::randn({3, 5, 7, 4}).slice(3, 1, 2);       // b: one column of a wider tensor
  expect_matches_eager(*backend, model.graph, in);
  EXPECT_EQ(backend->stats().fallbacks, 0);
  EXPECT_GE(backend->stats().fusion_groups, 1);
}

// Found by the fuzzer (`gbc divergence fp64,tolerance [batch_norm]`): batch_norm in training mode of a
// channel of equal values is exactly its bias (the deviations are 0), but x * scale + (bias - mean *
// scale) with scale = 1 / sqrt(1e-6) = 1000 left ulp(1000) of rounding. gbc computes
// (x * scale - mean * scale) + bias.
TEST(GeneratedCode, BatchNormTrainingOfAConstantChannelIsItsBias) {
  Model model = load(R"(format: gbcheck/v1
name: bn_constant
inputs:
  x: {shape: [2, 2, 2]}
params:
  w: {shape: [2]}
  b: {shape: [2]}
  m: {shape: [2]}
  v: {shape: [2]}
graph:
  - {id: y, op: batch_norm, args: [x, w, b, m, v], eps: 1.0e-6, training: true}
outputs: [y]
)");
  std::unique_ptr<Backend> backend = test::prepared("gbc", model, options_of(model));
  const at::Tensor bias = at::tensor(std::vector<float>{0.3720367f, -0.1180031f});
  const std::vector<at::Tensor> in = {at::full({2, 2, 2}, 1.0f), at::ones({2}), bias, at::zeros({2}), at::ones({2})};
  const at::Tensor y = backend->run(test::clones(in))[0];
  EXPECT_TRUE(at::equal(y, bias.view({1, 2, 1}).expand({2, 2, 2}))) << y;
  EXPECT_EQ(backend->stats().fallbacks, 0);
}

TEST(Fallbacks, KernelThatFailsToCompileRunsOnAtenAndIsRecorded) {
  Model model = load(kChain, "chain.yaml");
  std::unique_ptr<Backend> backend = make_gbc_backend_with_cxx_flags(kRejectedFlag);
  backend->prepare(model.graph, options_of(model));
  // The module is compiled before the first call and fails; every call, the first included, runs
  // the group's nodes on ATen, so calls give the same bits (the check runs every case twice).
  std::vector<at::Tensor> in = inputs_for(model.graph, {}, 4);
  at::Tensor first = backend->run(test::clones(in))[0];
  EXPECT_EQ(backend->stats().fallbacks, 1);
  EXPECT_TRUE(at::equal(first, backend->run(test::clones(in))[0]));
  for (uint64_t seed : {1, 2, 3}) expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {}, seed));
  const std::vector<CompileEvent> fb = events_of(backend->stats(), CompileEvent::Kind::Fallback);
  ASSERT_EQ(fb.size(), 1u);
  EXPECT_EQ(backend->stats().fallbacks, 1);
  EXPECT_EQ(fb[0].code, "FB001");
  EXPECT_NE(fb[0].message.find("failed to compile; their nodes run on ATen"), std::string::npos) << fb[0].message;
  EXPECT_NE(fb[0].message.find("gbcheck-test-rejected-flag"), std::string::npos) << fb[0].message;
  EXPECT_EQ(fb[0].loc.str(), "chain.yaml:7:5");
  EXPECT_NE(fb[0].hint.find("--log kernels"), std::string::npos) << fb[0].hint;
}

TEST(Fallbacks, CheckCountsTheFallbackAgainstExpect) {
  Model model = load(kChain, "chain.yaml");
  RunOptions opt = run_options_from_model(model);
  opt.backends = {"gbc-rejected"};
  opt.cases = 3;
  opt.extra_backends.push_back(
      {"gbc-rejected", "gbc with a compiler flag the host compiler rejects",
       [] { return make_gbc_backend_with_cxx_flags(kRejectedFlag); }, /*compiled=*/true});
  CheckReport report = run_check(model, opt);
  ASSERT_EQ(report.backends.size(), 1u);
  const BackendReport& b = report.backends[0];
  EXPECT_EQ(b.cases_failed, 0);
  for (const CaseFailure& f : b.failures)
    ADD_FAILURE() << "case " << f.index << ": " << f.error << (f.outputs.empty() ? "" : " " + f.outputs[0].detail);
  EXPECT_EQ(b.stats.fallbacks, 1);
  ASSERT_EQ(b.expectation_failures.size(), 1u);
  EXPECT_NE(b.expectation_failures[0].find("fallbacks: expected 0, got 1"), std::string::npos);
  EXPECT_NE(b.expectation_failures[0].find("FB001 at chain.yaml:7:5"), std::string::npos) << b.expectation_failures[0];
  EXPECT_FALSE(report.pass());
}

TEST(Fallbacks, SameModelCompilesWithTheRealFlags) {
  Model model = load(kChain, "chain.yaml");
  std::unique_ptr<Backend> backend = make_backend("gbc");
  backend->prepare(model.graph, options_of(model));
  for (uint64_t seed : {1, 2}) expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {}, seed));
  EXPECT_EQ(backend->stats().fallbacks, 0);
  EXPECT_EQ(backend->stats().fusion_groups, 1);
}

}  // namespace
}  // namespace gbc
