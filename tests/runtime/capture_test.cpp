// Graph breaks: one model per break kind (GB001..GB006), each asserting the stable code, the
// breaking node's file:line:col, the reason and the hint, on every tier of gbc's ladder, with
// results equal to eager across the eager island; and the check options that remove a break
// (reorderable_logging, capture_scalar_outputs, rewrite_if, a custom op's meta).
#include "compiler/runtime/capture.h"

#include <gtest/gtest.h>

#include <sstream>

#include "compiler/runtime/graph_runtime.h"
#include "tests/runtime/runtime_test_util.h"
#include "tests/support/print_break_model.h"

namespace gbc {
namespace {

using test::events_of;
using test::expect_matches_eager;
using test::inputs_for;
using test::load;
using test::options_of;
using test::prepared;

const std::vector<std::string> kLadder = {"trace", "decomp", "gbc-interp", "gbc"};

struct ExpectedBreak {
  std::string code;
  std::string loc;      // file:line:col of the breaking node
  std::string reason;   // a substring of the message
  std::string hint;     // a substring of the hint
};

// Every tier reports exactly `expected`, splits the model into `graphs` compiled graphs and
// computes what eager computes.
void expect_single_break(const std::string& yaml, const std::string& path, const ExpectedBreak& expected, int graphs) {
  Model model = load(yaml, path);
  for (const std::string& name : kLadder) {
    SCOPED_TRACE(name);
    std::unique_ptr<Backend> backend = prepared(name, model, options_of(model));
    const std::vector<CompileEvent> breaks = events_of(backend->stats(), CompileEvent::Kind::GraphBreak);
    ASSERT_EQ(breaks.size(), 1u);
    EXPECT_EQ(backend->stats().graph_breaks, 1);
    EXPECT_EQ(backend->stats().graphs, graphs);
    EXPECT_EQ(breaks[0].code, expected.code);
    EXPECT_EQ(breaks[0].loc.str(), expected.loc);
    EXPECT_NE(breaks[0].message.find(expected.reason), std::string::npos) << breaks[0].message;
    EXPECT_NE(breaks[0].hint.find(expected.hint), std::string::npos) << breaks[0].hint;
    for (uint64_t seed : {1, 2}) expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {}, seed));
    EXPECT_EQ(backend->stats().fallbacks, 0);
  }
}

TEST(GraphBreaks, PrintIsGB001) {
  expect_single_break(testing::kPrintBreakModel, "print.yaml",
                      {"GB001", "print.yaml:7:5", "print has a side effect", "check.reorderable_logging: true"}, 2);
}

TEST(GraphBreaks, ItemIsGB002WithoutCaptureScalarOutputs) {
  expect_single_break(R"(format: gbcheck/v1
name: item_break
inputs:
  x: {shape: [4, 3]}
graph:
  - {id: m, op: amax, args: [x]}
  - {id: s, op: item, args: [m]}
  - {id: y, op: mul, args: [x, s]}
outputs: [y]
)",
                      "item.yaml", {"GB002", "item.yaml:7:5", "copies a tensor value to the host", "capture_scalar_outputs: true"},
                      2);
}

TEST(GraphBreaks, DataDependentIfIsGB003) {
  expect_single_break(R"(format: gbcheck/v1
name: if_break
inputs:
  x: {shape: [4, 3]}
graph:
  - {id: s, op: sum, args: [x]}
  - {id: p, op: gt, args: [s, 0]}
  - op: if
    args: [p]
    result: r
    then:
      - {id: r, op: relu, args: [x]}
    else:
      - {id: r, op: neg, args: [x]}
  - {id: y, op: exp, args: [r]}
outputs: [y]
)",
                      "if.yaml", {"GB003", "if.yaml:8:5", "data-dependent if: the branch taken depends on the value of tensor 'p'", "check.rewrite_if: true"},
                      2);
}

TEST(GraphBreaks, NonzeroIsGB004) {
  expect_single_break(R"(format: gbcheck/v1
name: nonzero_break
inputs:
  x: {shape: [4, 3]}
graph:
  - {id: a, op: relu, args: [x]}
  - {id: n, op: nonzero, args: [a]}
  - {id: y, op: exp, args: [a]}
outputs: [y, n]
)",
                      "nonzero.yaml", {"GB004", "nonzero.yaml:7:5", "depends on the data", "use a mask"}, 2);
}

TEST(GraphBreaks, CustomWithoutMetaIsGB005) {
  expect_single_break(R"(format: gbcheck/v1
name: custom_break
inputs:
  x: {shape: [4, 3]}
graph:
  - {id: a, op: exp, args: [x]}
  - {id: c, op: custom, name: scaled_tanh, args: [a]}
  - {id: y, op: relu, args: [c]}
outputs: [y]
)",
                      "custom.yaml", {"GB005", "custom.yaml:7:5", "custom kernel 'scaled_tanh' has no meta", "meta: same_as_input"},
                      2);
}

TEST(GraphBreaks, InPlaceAddOnGraphInputIsGB006) {
  expect_single_break(R"(format: gbcheck/v1
name: add_inplace_break
inputs:
  x: {shape: [4, 3]}
graph:
  - {id: a, op: relu, args: [x]}
  - {op: add_, args: [x, 1.5]}
  - {id: y, op: mul, args: [a, x]}
outputs: [y]
)",
                      "add_.yaml", {"GB006", "add_.yaml:7:5", "add_ mutates graph input 'x' in place", "use add (out of place)"},
                      2);
}

TEST(GraphBreaks, InPlaceMulOnGraphInputIsGB006) {
  expect_single_break(R"(format: gbcheck/v1
name: mul_inplace_break
inputs:
  x: {shape: [4, 3]}
graph:
  - {op: mul_, args: [x, 2]}
  - {id: y, op: exp, args: [x]}
outputs: [y]
)",
                      "mul_.yaml", {"GB006", "mul_.yaml:6:5", "mul_ mutates graph input 'x' in place", "use mul (out of place)"},
                      1);
}

TEST(GraphBreaks, CopyIntoAGraphInputIsGB006) {
  // A model's own copy_ into an input breaks like add_ (decompose's write-backs come after capture).
  expect_single_break(R"(format: gbcheck/v1
name: copy_inplace_break
inputs:
  x: {shape: [4, 3]}
graph:
  - {id: a, op: relu, args: [x]}
  - {op: copy_, args: [x, a]}
  - {id: y, op: mul, args: [a, x]}
outputs: [y]
)",
                      "copy_.yaml", {"GB006", "copy_.yaml:7:5", "copy_ overwrites graph input 'x'", "return the copied value as an output"},
                      2);
}

TEST(GraphBreaks, BreaksKeepProgramOrderAndNumberGraphs) {
  Model model = load(R"(format: gbcheck/v1
name: two_breaks
inputs:
  x: {shape: [4, 3]}
graph:
  - {id: a, op: relu, args: [x]}
  - {op: print, args: [a]}
  - {id: b, op: exp, args: [a]}
  - {id: n, op: nonzero, args: [b]}
  - {id: y, op: neg, args: [b]}
outputs: [y, n]
)",
                     "two.yaml");
  std::unique_ptr<Backend> backend = prepared("trace", model, options_of(model));
  auto* runtime = dynamic_cast<GraphRuntime*>(backend.get());
  ASSERT_NE(runtime, nullptr);
  ProgramDescription d = runtime->describe();
  EXPECT_EQ(d.graphs, 3);
  ASSERT_EQ(d.segments.size(), 5u);
  const std::vector<std::string> codes = {"", "GB001", "", "GB004", ""};
  for (size_t i = 0; i < codes.size(); ++i) {
    EXPECT_EQ(d.segments[i].island, !codes[i].empty()) << i;
    EXPECT_EQ(d.segments[i].graph_break.code, codes[i]) << i;
  }
  EXPECT_EQ(d.segments[4].region, 2);
}

TEST(GraphBreakOptions, ReorderableLoggingMovesPrintAfterTheGraph) {
  const std::string body = R"(inputs:
  x: {shape: [2, 2]}
graph:
  - {id: a, op: relu, args: [x]}
  - {op: print, args: [a], message: "relu out"}
  - {id: y, op: exp, args: [a]}
outputs: [y]
)";
  Model model = load("format: gbcheck/v1\nname: logging\n" + body + "check: {reorderable_logging: true}\n");
  for (const std::string& name : kLadder) {
    SCOPED_TRACE(name);
    std::ostringstream printed, eager_printed;
    std::unique_ptr<Backend> backend = prepared(name, model, options_of(model, &printed));
    EXPECT_EQ(backend->stats().graph_breaks, 0);
    EXPECT_EQ(backend->stats().graphs, 1);
    std::vector<at::Tensor> inputs = inputs_for(model.graph, {});
    expect_matches_eager(*backend, model.graph, inputs);
    EagerOptions eo;
    eo.print_sink = &eager_printed;
    run_eager(model.graph, test::clones(inputs), eo);
    EXPECT_NE(printed.str().find("relu out"), std::string::npos);
    EXPECT_EQ(printed.str(), eager_printed.str());
  }
}

TEST(GraphBreakOptions, CaptureScalarOutputsKeepsItemInTheGraph) {
  Model model = load(R"(format: gbcheck/v1
name: item_captured
inputs:
  x: {shape: [4, 3]}
graph:
  - {id: m, op: amax, args: [x]}
  - {id: s, op: item, args: [m]}
  - {id: y, op: mul, args: [x, s]}
outputs: [y]
check: {capture_scalar_outputs: true}
)");
  for (const std::string& name : kLadder) {
    SCOPED_TRACE(name);
    std::unique_ptr<Backend> backend = prepared(name, model, options_of(model));
    EXPECT_EQ(backend->stats().graph_breaks, 0);
    EXPECT_EQ(backend->stats().graphs, 1);
    expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {}));
  }
}

TEST(GraphBreakOptions, RewriteIfSelectsWithWhereOnBothBranches) {
  Model model = load(R"(format: gbcheck/v1
name: if_rewritten
inputs:
  x: {shape: [4, 3]}
graph:
  - {id: s, op: sum, args: [x]}
  - {id: p, op: gt, args: [s, 0]}
  - op: if
    args: [p]
    result: r
    then:
      - {id: r, op: relu, args: [x]}
    else:
      - {id: t, op: neg, args: [x]}
      - {id: r, op: exp, args: [t]}
  - {id: y, op: mul, args: [r, 2]}
outputs: [y]
check: {rewrite_if: true}
)",
                     "rewrite.yaml");
  for (const std::string& name : kLadder) {
    SCOPED_TRACE(name);
    std::unique_ptr<Backend> backend = prepared(name, model, options_of(model));
    EXPECT_EQ(backend->stats().graph_breaks, 0);
    EXPECT_EQ(backend->stats().graphs, 1);
    auto* runtime = dynamic_cast<GraphRuntime*>(backend.get());
    ASSERT_NE(runtime, nullptr);
    ASSERT_EQ(runtime->describe().rewritten_ifs.size(), 1u);
    EXPECT_EQ(runtime->describe().rewritten_ifs[0].str(), "rewrite.yaml:8:5");
    // Both branches must be taken: a positive and a negative sum.
    std::vector<at::Tensor> in = inputs_for(model.graph, {});
    expect_matches_eager(*backend, model.graph, {in[0].abs()});
    expect_matches_eager(*backend, model.graph, {-in[0].abs()});
  }
}

TEST(GraphBreakOptions, RewriteIfRefusesImpureBranchesAndSaysWhy) {
  Model model = load(R"(format: gbcheck/v1
name: if_impure
inputs:
  x: {shape: [4, 3]}
graph:
  - {id: s, op: sum, args: [x]}
  - {id: p, op: gt, args: [s, 0]}
  - op: if
    args: [p]
    result: r
    then:
      - {op: print, args: [x]}
      - {id: r, op: relu, args: [x]}
    else:
      - {id: r, op: neg, args: [x]}
outputs: [r]
check: {rewrite_if: true}
)",
                     "impure.yaml");
  std::unique_ptr<Backend> backend = prepared("trace", model, options_of(model));
  const std::vector<CompileEvent> breaks = events_of(backend->stats(), CompileEvent::Kind::GraphBreak);
  ASSERT_EQ(breaks.size(), 1u);
  EXPECT_EQ(breaks[0].code, "GB003");
  EXPECT_EQ(breaks[0].loc.str(), "impure.yaml:8:5");
  EXPECT_NE(breaks[0].message.find("rewrite_if cannot apply"), std::string::npos) << breaks[0].message;
  EXPECT_NE(breaks[0].hint.find("free of side effects"), std::string::npos) << breaks[0].hint;
}

TEST(GraphBreakOptions, CustomWithMetaStaysInTheGraph) {
  Model model = load(R"(format: gbcheck/v1
name: custom_meta
inputs:
  x: {shape: [4, 3]}
graph:
  - {id: a, op: exp, args: [x]}
  - {id: c, op: custom, name: scaled_tanh, meta: same_as_input, args: [a]}
  - {id: y, op: relu, args: [c]}
outputs: [y]
)");
  for (const std::string& name : kLadder) {
    SCOPED_TRACE(name);
    std::unique_ptr<Backend> backend = prepared(name, model, options_of(model));
    EXPECT_EQ(backend->stats().graph_breaks, 0);
    EXPECT_EQ(backend->stats().graphs, 1);
    expect_matches_eager(*backend, model.graph, inputs_for(model.graph, {}));
  }
}

}  // namespace
}  // namespace gbc
