// values_with_pinned_zero_sign: the outputs the signed_zero oracle may judge are those computed
// only by ops IEEE 754 defines to the bit, from inputs and constants, with no write into them.
#include "harness/runner/zero_sign_cone.h"

#include <gtest/gtest.h>

#include "harness/model/model_loader.h"

namespace gbc {
namespace {

std::set<std::string> pinned_names(const std::string& text) {
  Model m = load_model_text(text, "cone.yaml");
  std::set<std::string> names;
  for (ValueId v : values_with_pinned_zero_sign(m.graph)) names.insert(m.graph.name_of(v));
  return names;
}

TEST(ZeroSignCone, ExactOpsPinAndImplementationDefinedOnesEndTheCone) {
  const std::set<std::string> pinned = pinned_names(R"(format: gbcheck/v1
name: cone
dims: {N: [1, 8]}
inputs:
  x: {shape: [N], dtype: float32}
  z: {shape: [N], dtype: float32}
graph:
  - {id: a, op: sub, args: [x, -0.0]}
  - {id: b, op: mul, args: [a, z]}
  - {id: m, op: gt, args: [x, 0.0]}
  - {id: c, op: where, args: [m, b, -0.0]}
  - {id: d, op: to, args: [c], dtype: float16}
  - {id: v, op: reshape, args: [d], shape: [N, 1]}
  - {id: q, op: div, args: [v, -2.0]}
  - {id: r, op: relu, args: [x]}
  - {id: s, op: neg, args: [r]}
  - {id: mx, op: maximum, args: [x, z]}
  - {id: e, op: add, args: [mx, x]}
  - {id: sm, op: sum, args: [x]}
  - {id: k, op: full, shape: [N], value: -0.0, dtype: float32}
  - {id: kk, op: add, args: [k, x]}
outputs: [q, s, e, sm, kk]
)");
  for (const char* v : {"x", "z", "a", "b", "m", "c", "d", "v", "q", "k", "kk"}) EXPECT_TRUE(pinned.count(v)) << v;
  // relu, maximum and sum may give either zero; what is computed from them inherits that.
  for (const char* v : {"r", "s", "mx", "e", "sm"}) EXPECT_FALSE(pinned.count(v)) << v;
}

TEST(ZeroSignCone, ValuesAnInPlaceOpMayWriteAreNotPinned) {
  const std::set<std::string> pinned = pinned_names(R"(format: gbcheck/v1
name: written
inputs:
  x: {shape: [4], dtype: float32}
  z: {shape: [4], dtype: float32}
graph:
  - {id: a, op: exp, args: [x]}
  - {id: b, op: neg, args: [x]}
  - {op: add_, args: [b, 1.0]}
  - {id: c, op: mul, args: [b, z]}
  - {id: w, op: neg, args: [z]}
outputs: [a, c, w]
)");
  EXPECT_FALSE(pinned.count("a"));  // exp: the math library's
  EXPECT_FALSE(pinned.count("b"));  // written in place
  EXPECT_FALSE(pinned.count("c"));
  EXPECT_TRUE(pinned.count("w"));
}

}  // namespace
}  // namespace gbc
