// functionalize: which in-place ops become out-of-place (the write is private) and which must stay
// (graph inputs, and writes that a view or a later read would observe).
#include "compiler/passes/functionalize.h"

#include <gtest/gtest.h>

#include "tests/passes/pass_test_util.h"

namespace gbc {
namespace {

using testing::graph_of;
using testing::ir;

TEST(Functionalize, PrivateWritesBecomeOutOfPlace) {
  Graph g = graph_of(R"(inputs: {x: {shape: [2, 3], dtype: float32}}
graph:
  - {id: a, op: exp, args: [x]}
  - {op: add_, args: [a, 1.0]}
  - {op: mul_, args: [a, 2]}
  - {id: v, op: reshape, args: [a], shape: [6]}
  - {op: add_, args: [v, 3.0]}
outputs: [v]
)");
  // The reshape reads a only after the first two writes, and the write to the view is seen only
  // through its result.
  EXPECT_EQ(ir(functionalize(g)), R"(graph t(x: float32[2, 3]) {
  a: float32[2, 3] = exp(x)
  a.mut: float32[2, 3] = add(a, 1.0)
  a.mut.1: float32[2, 3] = mul(a.mut, 2)
  v: float32[6] = reshape(a.mut.1, shape=[6])
  v.mut: float32[6] = add(v, 3.0)
  return v.mut
}
)");
}

TEST(Functionalize, InPlaceInsideABranch) {
  Graph g = graph_of(R"(inputs: {x: {shape: [3], dtype: float32}, p: {shape: [], dtype: bool}}
graph:
  - op: if
    args: [p]
    result: y
    then:
      - {id: y, op: neg, args: [x]}
      - {op: mul_, args: [y, 2]}
    else:
      - {id: y, op: relu, args: [x]}
outputs: [y]
)");
  EXPECT_EQ(ir(functionalize(g)), R"(graph t(x: float32[3], p: bool[]) {
  y: float32[3] = if(p, result=y) {
  then:
    y: float32[3] = neg(x)
    y.then: float32[3] = mul(y, 2)
    yield y.then
  else:
    y.else: float32[3] = relu(x)
    yield y.else
  }
  return y
}
)");
}

TEST(Functionalize, WideningPromotionCastsBackToSelfDtype) {
  Graph g = graph_of(R"(inputs: {h: {shape: [2, 3], dtype: float16}, o: {shape: [2, 3], dtype: float32}}
graph:
  - {id: c, op: neg, args: [h]}
  - {op: add_, args: [c, o]}
outputs: [c]
)");
  // add_ computes in float32 and stores into float16 self: add, then a cast back.
  EXPECT_EQ(ir(functionalize(g)), R"(graph t(h: float16[2, 3], o: float32[2, 3]) {
  c: float16[2, 3] = neg(h)
  c.mut.float32: float32[2, 3] = add(c, o)
  c.mut: float16[2, 3] = to(c.mut.float32, dtype=float16)
  return c.mut
}
)");
}

TEST(Functionalize, ObservableWritesStay) {
  Graph g = graph_of(R"(inputs: {x: {shape: [2, 3], dtype: float32}}
graph:
  - {op: add_, args: [x, 1]}
  - {id: s, op: transpose, args: [x], dim0: 0, dim1: 1}
  - {op: mul_, args: [s, 2]}
  - {id: v0, op: relu, args: [x]}
  - {id: v, op: reshape, args: [v0], shape: [3, 2]}
  - {op: mul_, args: [v0, 3]}
  - {id: r, op: add, args: [v, 1]}
  - {id: c, op: exp, args: [x]}
  - {id: t, op: reshape, args: [c], shape: [6]}
  - {op: mul_, args: [t, 2]}
  - {id: d, op: sigmoid, args: [x]}
  - {op: add_, args: [d, d]}
outputs: [r, c, t, d]
)");
  // x is a graph input; s is a view of it; v (a view of v0 taken before the write) is read after
  // it; t is a view of c, a graph output read at the end; d is added to itself (overlap).
  EXPECT_EQ(ir(functionalize(g)), ir(g));
}

}  // namespace
}  // namespace gbc
