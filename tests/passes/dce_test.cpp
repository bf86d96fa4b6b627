// dce: unused pure nodes go (inside branches too, and whole pure `if`s); effects, their operands
// and graph inputs stay.
#include "compiler/passes/dce.h"

#include <gtest/gtest.h>

#include "tests/passes/pass_test_util.h"

namespace gbc {
namespace {

using testing::graph_of;
using testing::ir;

TEST(Dce, RemovesUnusedPureNodesAndKeepsEffects) {
  Graph g = graph_of(R"(inputs: {x: {shape: [3], dtype: float32}, unused_input: {shape: [3], dtype: float32}}
params:
  rm: {shape: [3], dtype: float32}
  rv: {shape: [3], dtype: float32}
  c: {shape: [3], dtype: float32}
graph:
  - {id: a, op: exp, args: [x]}
  - {id: dead1, op: neg, args: [a]}
  - {id: dead2, op: sin, args: [dead1]}
  - {id: dr, op: dropout, args: [x], p: 0.5}
  - {id: k, op: custom, args: [x], name: scaled_tanh}
  - {id: t, op: tanh, args: [x]}
  - {op: mul_, args: [t, 2]}
  - {id: r, op: reshape, args: [x], shape: [1, 3]}
  - {id: e, op: expand, args: [r], size: [2, 3]}
  - {id: bn, op: batch_norm, args: [e, c, c, rm, rv], training: true}
  - {id: p, op: sigmoid, args: [x]}
  - op: print
    args: [p]
    message: p
  - {id: y, op: relu, args: [a]}
outputs: [y]
)");
  EXPECT_EQ(ir(dce(g)), R"(graph t(x: float32[3], unused_input: float32[3], param rm: float32[3], param rv: float32[3], param c: float32[3]) {
  a: float32[3] = exp(x)
  dr: float32[3] = dropout(x, p=0.5)
  k: float32[3] = custom(x, name=scaled_tanh)
  t: float32[3] = tanh(x)
  t.mut: float32[3] = mul_(t, 2)
  r: float32[1, 3] = reshape(x, shape=[1, 3])
  e: float32[2, 3] = expand(r, size=[2, 3])
  bn: float32[2, 3] = batch_norm(e, c, c, rm, rv, training=true)
  p: float32[3] = sigmoid(x)
  print(p, message=p)
  y: float32[3] = relu(a)
  return y
}
)");
}

TEST(Dce, CleansBranchesAndDropsPureIfs) {
  Graph g = graph_of(R"(inputs: {x: {shape: [3], dtype: float32}, p: {shape: [], dtype: bool}}
graph:
  - op: if
    args: [p]
    result: y
    then:
      - {id: dead, op: cos, args: [x]}
      - {id: y, op: sin, args: [x]}
    else:
      - {id: y, op: neg, args: [x]}
  - op: if
    args: [p]
    result: unused
    then:
      - {id: unused, op: exp, args: [x]}
    else:
      - {id: unused, op: relu, args: [x]}
  - {id: q, op: exp, args: [x]}
  - op: if
    args: [p]
    result: logged
    then:
      - {id: logged, op: abs, args: [q]}
      - op: print
        args: [logged]
    else:
      - {id: logged, op: neg, args: [x]}
outputs: [y]
)");
  EXPECT_EQ(ir(dce(g)), R"(graph t(x: float32[3], p: bool[]) {
  y: float32[3] = if(p, result=y) {
  then:
    y.then: float32[3] = sin(x)
    yield y.then
  else:
    y.else: float32[3] = neg(x)
    yield y.else
  }
  q: float32[3] = exp(x)
  logged: float32[3] = if(p, result=logged) {
  then:
    logged.then: float32[3] = abs(q)
    print(logged.then)
    yield logged.then
  else:
    logged.else: float32[3] = neg(x)
    yield logged.else
  }
  return y
}
)");
}

}  // namespace
}  // namespace gbc
