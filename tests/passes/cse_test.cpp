// cse: identical pure nodes merge (including into branches from the enclosing block); effects,
// host syncs, data-dependent ops, sibling branches, different numbers, written values and generic
// ATen ops that are random or write their argument do not.
#include "compiler/passes/cse.h"

#include <gtest/gtest.h>

#include "compiler/aten/aten_generic.h"
#include "tests/passes/pass_test_util.h"

namespace gbc {
namespace {

using testing::graph_of;
using testing::ir;

TEST(Cse, MergesIdenticalPureNodesAndTheirUsers) {
  Graph g = graph_of(R"(inputs: {x: {shape: [2, 3], dtype: float32}}
graph:
  - {id: a, op: exp, args: [x]}
  - {id: b, op: exp, args: [x]}
  - {id: sa, op: sum, args: [a], dim: 1}
  - {id: sb, op: sum, args: [b], dim: 1}
  - {id: other, op: sum, args: [b], dim: 0}
  - {id: c, op: full, shape: [3], value: 2.0}
  - {id: d, op: full, shape: [3], value: 2.0}
  - {id: y, op: add, args: [sa, sb]}
outputs: [y, other, c, d]
)");
  EXPECT_EQ(ir(cse(g)), R"(graph t(x: float32[2, 3]) {
  a: float32[2, 3] = exp(x)
  sa: float32[2] = sum(a, dim=1)
  other: float32[3] = sum(a, dim=0)
  c: float32[3] = full(shape=[3], value=2.0)
  d: float32[3] = full(shape=[3], value=2.0)
  y: float32[2] = add(sa, sa)
  return y, other, c, d
}
)");
}

// Two values the graph returns stay two tensors even when equal (c and d above): the caller holds
// both and may write to one (a graph break's in-place op after this graph returns, or the user's
// code), which must not show in the other, as in eager. A value merged into one the graph returns
// is returned too: a third equal value does not merge into either.
TEST(Cse, ReturnedValuesStayDistinctTensors) {
  Graph g = graph_of(R"(inputs: {x: {shape: [3], dtype: float32}}
graph:
  - {id: a, op: exp, args: [x]}
  - {id: b, op: exp, args: [x]}
  - {id: c, op: exp, args: [x]}
  - {id: s, op: sum, args: [a]}
outputs: [s, b, c]
)");
  EXPECT_EQ(ir(cse(g)), R"(graph t(x: float32[3]) {
  a: float32[3] = exp(x)
  c: float32[3] = exp(x)
  s: float32[] = sum(a)
  return s, a, c
}
)");
}

TEST(Cse, BranchesReuseEnclosingValuesButNotEachOthers) {
  Graph g = graph_of(R"(inputs: {x: {shape: [3], dtype: float32}, p: {shape: [], dtype: bool}}
graph:
  - {id: a, op: exp, args: [x]}
  - op: if
    args: [p]
    result: y
    then:
      - {id: e, op: exp, args: [x]}
      - {id: s, op: sin, args: [x]}
      - {id: y, op: mul, args: [e, s]}
    else:
      - {id: s, op: sin, args: [x]}
      - {id: y, op: neg, args: [s]}
  - {id: z, op: sin, args: [x]}
outputs: [y, a, z]
)");
  EXPECT_EQ(ir(cse(g)), R"(graph t(x: float32[3], p: bool[]) {
  a: float32[3] = exp(x)
  y: float32[3] = if(p, result=y) {
  then:
    s: float32[3] = sin(x)
    y.then: float32[3] = mul(a, s)
    yield y.then
  else:
    s: float32[3] = sin(x)
    y.else: float32[3] = neg(s)
    yield y.else
  }
  z: float32[3] = sin(x)
  return y, a, z
}
)");
}

TEST(Cse, NeverMergesEffectsSyncsOrDistinctNumbers) {
  Graph g = graph_of(R"(inputs: {x: {shape: [3], dtype: float32}}
graph:
  - {id: d1, op: dropout, args: [x], p: 0.5}
  - {id: d2, op: dropout, args: [x], p: 0.5}
  - {id: s, op: sum, args: [x]}
  - {id: i1, op: item, args: [s]}
  - {id: i2, op: item, args: [s]}
  - {id: n1, op: nonzero, args: [x]}
  - {id: n2, op: nonzero, args: [x]}
  - {id: k1, op: custom, args: [x], name: scaled_tanh}
  - {id: k2, op: custom, args: [x], name: scaled_tanh}
  - {id: z1, op: add, args: [x, 0.0]}
  - {id: z2, op: add, args: [x, -0.0]}
  - {id: m1, op: mul, args: [x, i1]}
  - {id: m2, op: mul, args: [x, i2]}
  - op: print
    args: [x]
  - op: print
    args: [x]
outputs: [d1, d2, n1, n2, k1, k2, z1, z2, m1, m2]
)");
  EXPECT_EQ(ir(cse(g)), ir(g));
}

TEST(Cse, WrittenValuesAreDistinctTensors) {
  Graph g = graph_of(R"(inputs: {x: {shape: [3], dtype: float32}}
graph:
  - {id: a, op: exp, args: [x]}
  - {id: b, op: exp, args: [x]}
  - {op: add_, args: [a, 1.0]}
outputs: [a, b]
)");
  EXPECT_EQ(ir(cse(g)), ir(g));
}

// Generic ATen ops merge when pure; one that draws random numbers (bernoulli, tagged
// nondeterministic_seeded) or writes its argument (relu_, Tensor(a!)) is an effect.
TEST(Cse, GenericAtenOpsMergeOnlyWhenPure) {
  Graph g = graph_of(R"yaml(inputs: {x: {shape: [4], dtype: float32, values: {dist: uniform, low: 0.0, high: 1.0}}}
graph:
  - {id: h1, op: aten, schema: "aten::hardswish(Tensor self) -> Tensor", args: [x]}
  - {id: h2, op: aten, schema: "aten::hardswish(Tensor self) -> Tensor", args: [x]}
  - {id: r1, op: aten, schema: "aten::bernoulli(Tensor self, *, Generator? generator=None) -> Tensor", args: [x]}
  - {id: r2, op: aten, schema: "aten::bernoulli(Tensor self, *, Generator? generator=None) -> Tensor", args: [x]}
  - {id: e, op: exp, args: [x]}
  - {id: m1, op: aten, schema: "aten::relu_(Tensor(a!) self) -> Tensor(a!)", args: [e]}
  - {id: m2, op: aten, schema: "aten::relu_(Tensor(a!) self) -> Tensor(a!)", args: [e]}
  - {id: hs, op: add, args: [h1, h2]}
outputs: [hs, r1, r2, m1, m2]
)yaml");
  const Node& bernoulli = g.body.nodes[2];
  const Node& relu_ = g.body.nodes[5];
  EXPECT_TRUE(generic_op_effects_of_schema(bernoulli).random);
  EXPECT_TRUE(generic_op_effects_of_schema(relu_).mutates);
  EXPECT_FALSE(generic_op_effects_of_schema(g.body.nodes[0]).mutates || generic_op_effects_of_schema(g.body.nodes[0]).random);
  std::string out = ir(cse(g));
  EXPECT_EQ(out.find("h2: "), std::string::npos) << out;  // merged into h1
  EXPECT_NE(out.find("r2: "), std::string::npos) << out;
  EXPECT_NE(out.find("m2: "), std::string::npos) << out;
}

}  // namespace
}  // namespace gbc
