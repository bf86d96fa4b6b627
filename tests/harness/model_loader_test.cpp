#include "harness/model/model_loader.h"

#include <gtest/gtest.h>

#include "compiler/ir/printer.h"

namespace gbc {
namespace {

std::string errors_of(const std::string& yaml) {
  try {
    load_model_text(yaml, "m.yaml");
  } catch (const ModelError& e) {
    return e.diagnostics().str();
  }
  return "";
}

TEST(ModelLoaderTest, BuildsTypedGraphWithLocations) {
  Model m = load_model_text(R"(format: gbcheck/v1
name: mlp
dims: {B: [1, 32]}
inputs:
  x: {shape: [B, 64], dtype: float32}
params:
  w: {shape: [64, 32], dtype: float32, values: {dist: uniform, low: -0.1, high: 0.1}}
graph:
  - {id: h, op: matmul, args: [x, w]}
  - {id: y, op: softmax, args: [h], dim: -1}
outputs: [y]
)",
                            "mlp.yaml");
  EXPECT_EQ(m.name, "mlp");
  ASSERT_EQ(m.graph.body.nodes.size(), 2u);
  const Node& mm = m.graph.body.nodes[0];
  EXPECT_EQ(mm.loc.str(), "mlp.yaml:9:5");
  EXPECT_EQ(m.graph.type(mm.output()).str(), "float32[B, 32]");
  ASSERT_EQ(m.params.size(), 1u);
  EXPECT_TRUE(m.params[0].is_param);
  EXPECT_EQ(m.params[0].dist.kind, ValueDist::Kind::Uniform);
  EXPECT_EQ(m.inputs[0].dist.kind, ValueDist::Kind::Normal);  // the float default
  EXPECT_EQ(m.check.cases, 20);                               // check is optional
}

TEST(ModelLoaderTest, ScalarsKeepTheirKind) {
  Model m = load_model_text(R"(format: gbcheck/v1
inputs: {x: {shape: [4], dtype: int32}}
graph:
  - {id: a, op: add, args: [x, 2]}
  - {id: b, op: mul, args: [x, 2.5]}
outputs: [a, b]
)",
                            "m.yaml");
  EXPECT_EQ(m.graph.type(m.graph.body.nodes[0].output()).dtype, DType::Int32);
  EXPECT_EQ(m.graph.type(m.graph.body.nodes[1].output()).dtype, DType::Float32);
  EXPECT_EQ(m.graph.body.nodes[1].args[1].scalar.kind, ScalarKind::Float);
}

TEST(ModelLoaderTest, InPlaceRebindsTheName) {
  Model m = load_model_text(R"(format: gbcheck/v1
inputs: {x: {shape: [4], dtype: float32}}
graph:
  - {op: add_, args: [x, 1.0]}
  - {id: y, op: mul, args: [x, 2.0]}
outputs: [y]
)",
                            "m.yaml");
  const Node& add = m.graph.body.nodes[0];
  const Node& mul = m.graph.body.nodes[1];
  EXPECT_EQ(mul.args[0].value, add.output());  // later uses of x see the mutated tensor
  EXPECT_NE(add.output(), m.inputs[0].value);
}

TEST(ModelLoaderTest, IfBranchesDefineTheResult) {
  Model m = load_model_text(R"(format: gbcheck/v1
inputs: {x: {shape: [4], dtype: float32}}
graph:
  - {id: s, op: sum, args: [x]}
  - {id: p, op: gt, args: [s, 0.0]}
  - op: if
    args: [p]
    result: r
    then:
      - {id: r, op: relu, args: [x]}
    else:
      - {id: t, op: neg, args: [x]}
      - {id: r, op: relu, args: [t]}
  - {id: y, op: add, args: [r, 1.0]}
outputs: [y]
)",
                            "m.yaml");
  const Node& iff = m.graph.body.nodes[2];
  ASSERT_EQ(iff.blocks.size(), 2u);
  EXPECT_EQ(iff.blocks[1].nodes.size(), 2u);
  EXPECT_EQ(m.graph.name_of(iff.output()), "r");
  EXPECT_EQ(m.graph.name_of(iff.blocks[0].results[0]), "r.then");
  EXPECT_EQ(m.graph.body.nodes[3].args[0].value, iff.output());
}

TEST(ModelLoaderTest, BranchLocalIdsAreNotVisibleOutside) {
  std::string e = errors_of(R"(format: gbcheck/v1
inputs: {x: {shape: [1], dtype: float32}}
graph:
  - op: if
    args: [x]
    result: r
    then: [{id: t, op: relu, args: [x]}, {id: r, op: neg, args: [t]}]
    else: [{id: r, op: relu, args: [x]}]
  - {id: y, op: add, args: [t, 1.0]}
outputs: [y]
)");
  EXPECT_EQ(e, "m.yaml:9:29: error: add: 't' is local to an if branch (defined at m.yaml:7:17); hint: only the if's "
               "result is visible after it; compute 't' before the if, or make it the result\n");
}

TEST(ModelLoaderTest, SymbolicReshapeAndNonzero) {
  Model m = load_model_text(R"(format: gbcheck/v1
dims: {B: [1, 8]}
inputs: {x: {shape: [B, 4, 6], dtype: float32}}
graph:
  - {id: r, op: reshape, args: [x], shape: [B, -1]}
  - {id: f, op: flatten, args: [x], start_dim: 1}
  - {id: n, op: nonzero, args: [x]}
outputs: [r, f, n]
)",
                            "m.yaml");
  EXPECT_EQ(m.graph.type(m.graph.body.nodes[0].output()).str(), "float32[B, 24]");
  EXPECT_EQ(m.graph.dims.equal(m.graph.type(m.graph.body.nodes[0].output()).shape[1], 24), Truth::Always);
  EXPECT_EQ(m.graph.type(m.graph.body.nodes[1].output()).str(), "float32[B, 24]");
  const ValueType& n = m.graph.type(m.graph.body.nodes[2].output());
  EXPECT_EQ(n.dtype, DType::Int64);
  ASSERT_TRUE(n.shape[0].is_symbol());
  EXPECT_EQ(m.graph.dims.range(n.shape[0].name())->max, 8 * 24);
}

TEST(ModelLoaderTest, CheckSectionIsParsed) {
  Model m = load_model_text(R"(format: gbcheck/v1
inputs: {x: {shape: [4], dtype: float16}}
graph:
  - {id: y, op: relu, args: [x]}
outputs: [y]
check:
  seed: 7
  cases: 3
  backends: [nnc, gbc]
  tolerance: {float16: {rtol: 0.01, atol: 0.001}, y: {rtol: 0.5, atol: 0.0}}
  expect: {graph_breaks: 1, fallbacks: 0, min_speedup: 1.5}
  dynamic: true
  iterations: {steps: 4, feedback: {y: x}}
)",
                            "m.yaml");
  EXPECT_EQ(m.check.seed, 7u);
  EXPECT_EQ(m.check.cases, 3);
  EXPECT_EQ(m.check.backends, (std::vector<std::string>{"nnc", "gbc"}));
  EXPECT_DOUBLE_EQ(m.check.tolerance.at(DType::Float16).rtol, 0.01);
  EXPECT_DOUBLE_EQ(m.check.tolerance_for(DType::Float16, "y").rtol, 0.5);  // per output wins
  EXPECT_EQ(m.check.expect.graph_breaks, 1);
  EXPECT_EQ(m.check.dynamic, "true");
  ASSERT_EQ(m.check.iterations.feedback.size(), 1u);
  EXPECT_EQ(m.check.loc_of("backends").str(), "m.yaml:9:13");
}

TEST(ModelLoaderTest, ReportsEveryErrorSortedByPosition) {
  std::string e = errors_of(R"(format: gbcheck/v1
inputs: {x: {shape: [4, 3], dtype: float32}}
graph:
  - {id: a, op: sum, args: [x], dim: 7}
  - {id: b, op: relu, args: [x], bogus: 1}
  - {id: c, op: matmul, args: [x, x]}
outputs: [a, b, c]
check: {cases: -1}
)");
  EXPECT_EQ(e,
            "m.yaml:4:5: error: sum: dim 7 is out of range for a 2-d tensor (expected -2..1)\n"
            "m.yaml:5:34: error: relu: unknown key 'bogus'; hint: known keys: id, op, args, source\n"
            "m.yaml:6:5: error: matmul: inner dimensions differ (3 vs 4); hint: the last dim of the first operand must "
            "equal the second-to-last dim of the second ([4, 3] @ [4, 3])\n"
            "m.yaml:8:16: error: check.cases must be between 1 and 1000000, got -1\n");
}

TEST(ModelLoaderTest, NeverThrowsAnythingButModelErrorOnGarbage) {
  for (const char* text : {"", "[1, 2", "format: gbcheck/v1\ngraph: 3\n", "format: gbcheck/v1\ngraph: [[[]]]\n",
                           "format: gbcheck/v1\ninputs: {x: {shape: [99999999999999999999]}}\n", "\t\t- :\n",
                           "format: gbcheck/v1\ndims: {B: [5, 1]}\n"}) {
    EXPECT_THROW(load_model_text(text, "g.yaml"), ModelError) << text;
  }
}

}  // namespace
}  // namespace gbc
