// Guards and recompiles: a changed dim recompiles and names the failing guard
// ("x.shape[0]: expected 16, got 17"), check.dynamic decides whether later sizes recompile, a
// layout change is its own code, and past cache_size_limit entries a graph runs eagerly with a
// recorded fallback (FB002), with results still equal to eager.
#include "compiler/runtime/guards.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "compiler/runtime/graph_runtime.h"
#include "harness/runner/check_runner.h"
#include "tests/runtime/runtime_test_util.h"

namespace gbc {
namespace {

using test::events_of;
using test::expect_matches_eager;
using test::inputs_for;
using test::load;
using test::options_of;
using test::prepared;

Model chain_model(const std::string& check) {
  return load(R"(format: gbcheck/v1
name: chain
dims: {N: [1, 64]}
inputs:
  x: {shape: [N, 3]}
graph:
  - {id: a, op: exp, args: [x]}
  - {id: y, op: add, args: [a, 1]}
outputs: [y]
check: )" + check + "\n",
              "chain.yaml");
}

int eager_calls(const Backend& backend) {
  const auto* runtime = dynamic_cast<const GraphRuntime*>(&backend);
  GBC_INTERNAL_ASSERT(runtime != nullptr, "not a GraphRuntime");
  return runtime->describe().segments.at(0).eager_calls;
}

TEST(Guards, FirstCompileIsNotARecompile) {
  Model model = chain_model("{dynamic: false}");
  std::unique_ptr<Backend> backend = prepared("trace", model, options_of(model));
  EXPECT_EQ(backend->stats().compiles, 0);
  expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {{"N", 16}}));
  expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {{"N", 16}}, 5));
  EXPECT_EQ(backend->stats().compiles, 1);
  EXPECT_EQ(backend->stats().recompiles, 0);
  EXPECT_TRUE(backend->stats().events.empty());
}

TEST(Guards, DimChangeRecompilesAndNamesTheFailingGuard) {
  Model model = chain_model("{dynamic: false}");
  for (const char* name : {"trace", "gbc-interp", "gbc"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<Backend> backend = prepared(name, model, options_of(model));
    expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {{"N", 16}}));
    expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {{"N", 17}}));
    const std::vector<CompileEvent> rc = events_of(backend->stats(), CompileEvent::Kind::Recompile);
    ASSERT_EQ(rc.size(), 1u);
    EXPECT_EQ(rc[0].code, "RC001");
    EXPECT_NE(rc[0].message.find("x.shape[0]: expected 16, got 17"), std::string::npos) << rc[0].message;
    EXPECT_EQ(rc[0].loc.str(), "chain.yaml:7:5");
    EXPECT_NE(rc[0].hint.find("check.dynamic: true"), std::string::npos) << rc[0].hint;
    EXPECT_EQ(backend->stats().compiles, 2);
    EXPECT_EQ(backend->stats().recompiles, 1);
    // Both entries stay: returning to 16 recompiles nothing.
    expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {{"N", 16}}, 9));
    EXPECT_EQ(backend->stats().compiles, 2);
  }
}

TEST(Guards, DynamicAutoMakesAChangedDimSymbolic) {
  Model model = chain_model("{dynamic: auto}");
  std::unique_ptr<Backend> backend = prepared("trace", model, options_of(model));
  for (int64_t n : {16, 17, 18, 40, 1}) expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {{"N", n}}));
  const std::vector<CompileEvent> rc = events_of(backend->stats(), CompileEvent::Kind::Recompile);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_NE(rc[0].message.find("x.shape[0]: expected 16, got 17; dim N dynamic from now on"), std::string::npos)
      << rc[0].message;
  EXPECT_EQ(backend->stats().compiles, 2);
}

TEST(Guards, DynamicTrueCompilesOnce) {
  Model model = chain_model("{dynamic: true}");
  std::unique_ptr<Backend> backend = prepared("gbc-interp", model, options_of(model));
  for (int64_t n : {16, 17, 3}) expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {{"N", n}}));
  EXPECT_EQ(backend->stats().compiles, 1);
  EXPECT_EQ(backend->stats().recompiles, 0);
}

TEST(Guards, LayoutChangeIsRC002) {
  Model model = chain_model("{dynamic: false}");
  std::unique_ptr<Backend> backend = prepared("trace", model, options_of(model));
  expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {{"N", 8}}));
  at::Tensor transposed = at::randn({3, 8}).t();
  expect_matches_eager(*backend, model.graph, {transposed});
  const std::vector<CompileEvent> rc = events_of(backend->stats(), CompileEvent::Kind::Recompile);
  ASSERT_EQ(rc.size(), 1u);
  EXPECT_EQ(rc[0].code, "RC002");
  EXPECT_NE(rc[0].message.find("x: expected a contiguous tensor"), std::string::npos) << rc[0].message;
}

TEST(Guards, CacheSizeLimitFallsBackToEagerAndSaysSo) {
  Model model = chain_model("{dynamic: false}");  // cache_size_limit: the default, 8
  ASSERT_EQ(options_of(model).cache_size_limit, 8);
  for (const char* name : {"trace", "gbc-interp"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<Backend> backend = prepared(name, model, options_of(model));
    for (int64_t n = 1; n <= 8; ++n) expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {{"N", n}}));
    EXPECT_EQ(backend->stats().compiles, 8);
    EXPECT_EQ(backend->stats().recompiles, 7);
    EXPECT_EQ(backend->stats().fallbacks, 0);

    expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {{"N", 9}}));
    expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {{"N", 10}}));
    EXPECT_EQ(backend->stats().compiles, 8);
    const std::vector<CompileEvent> fb = events_of(backend->stats(), CompileEvent::Kind::Fallback);
    ASSERT_EQ(fb.size(), 1u);
    EXPECT_EQ(fb[0].code, "FB002");
    EXPECT_NE(fb[0].message.find("graph 0 reached cache_size_limit (8 compiled entries)"), std::string::npos)
        << fb[0].message;
    EXPECT_NE(fb[0].message.find("x.shape[0]: expected 8, got 9"), std::string::npos) << fb[0].message;
    EXPECT_EQ(fb[0].loc.str(), "chain.yaml:7:5");
    EXPECT_EQ(eager_calls(*backend), 2);

    // A size that has an entry still runs compiled.
    expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {{"N", 3}}));
    EXPECT_EQ(eager_calls(*backend), 2);
  }
}

TEST(Guards, CacheSizeLimitFromTheModel) {
  Model model = chain_model("{dynamic: false, cache_size_limit: 2}");
  std::unique_ptr<Backend> backend = prepared("trace", model, options_of(model));
  for (int64_t n : {4, 5, 6}) expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {{"N", n}}));
  EXPECT_EQ(backend->stats().compiles, 2);
  EXPECT_EQ(backend->stats().recompiles, 1);
  ASSERT_EQ(backend->stats().fallbacks, 1);
  EXPECT_EQ(events_of(backend->stats(), CompileEvent::Kind::Fallback)[0].code, "FB002");
}

TEST(Guards, GuardTextListsWhatAnEntryPins) {
  Model model = chain_model("{dynamic: false}");
  std::unique_ptr<Backend> backend = prepared("trace", model, options_of(model));
  backend->run(inputs_for(model.graph, {{"N", 16}}));
  const auto* runtime = dynamic_cast<const GraphRuntime*>(backend.get());
  ASSERT_NE(runtime, nullptr);
  const std::string guards = runtime->describe().segments.at(0).entries.at(0).guards;
  EXPECT_NE(guards.find("x.shape[0] == 16"), std::string::npos) << guards;
  EXPECT_NE(guards.find("x: float32, cpu, contiguous"), std::string::npos) << guards;
}

// A call with another dtype than the model declares (`dtypes:`) compiles an entry for that dtype
// (RC003): the region's types are inferred again from the call's, with the model's rules (a
// training batch_norm's running stats are params, though the region passes them as inputs), and
// every step of the recompile sequence agrees with eager.
TEST(Guards, DtypeChangeCompilesAnEntryForTheNewDtype) {
  Model model = load(R"(format: gbcheck/v1
name: dtypes
dims: {N: [2, 8]}
inputs:
  x: {shape: [N, 4], dtypes: [float32, float64]}
params:
  g: {shape: [4], dtype: float64}
  bt: {shape: [4], dtype: float64}
  rm: {shape: [4], dtype: float64}
  rv: {shape: [4], dtype: float64, values: {dist: uniform, low: 0.5, high: 2.0}}
graph:
  - {id: h, op: to, args: [x], dtype: float64}
  - {id: b, op: batch_norm, args: [h, g, bt, rm, rv], training: true}
  - {id: y, op: mul, args: [x, 3.0]}
  - {id: z, op: exp, args: [y]}
outputs: [z, b]
check: {cases: 6, recompile_sequence: true}
)",
                     "dtypes.yaml");
  for (const char* name : {"gbc-interp", "gbc"}) {
    SCOPED_TRACE(name);
    RunOptions opt = run_options_from_model(model);
    opt.backends = {name};
    opt.max_shrink_tries = 0;
    const CheckReport report = run_check(model, opt);
    ASSERT_EQ(report.backends.size(), 1u);
    EXPECT_TRUE(report.backends[0].pass());
    const std::vector<CompileEvent> rc = events_of(report.backends[0].stats, CompileEvent::Kind::Recompile);
    ASSERT_FALSE(rc.empty());
    EXPECT_TRUE(std::any_of(rc.begin(), rc.end(), [](const CompileEvent& e) {
      return e.code == "RC003" && e.message.find("x.dtype: expected float32, got float64") != std::string::npos;
    }));
  }
}

}  // namespace
}  // namespace gbc
