// Integer results of a cast that rounding decides (cast_rounding.h, through output_judge): an
// element where the compiled result is one of the references with the cast's input moved down or
// up passes, overruling the tolerance; one that none of them reaches fails, as does everything
// without the bounds.
#include "oracles/cast_rounding.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "oracles/output_judge.h"

namespace gbc {
namespace {

at::Tensor shorts(std::vector<int64_t> v) { return at::tensor(v).to(at::kShort); }

JudgeConfig config_with_bounds(at::Tensor down, at::Tensor up, int* calls) {
  JudgeConfig c;
  c.fp64_cast_bounds = [down, up, calls] {
    ++*calls;
    return std::make_pair(down, up);
  };
  return c;
}

// to(int16) of a bfloat16 batch_norm next to the midpoint of 0.99609375 and 1.0 (seed 6301338):
// eager took 0.99609375 (0), gbc 1.0 (1); the exact value truncates to 0, the reference with the
// cast's input moved up to 1.
TEST(CastRounding, ACompiledResultTheMovedReferenceReachesPasses) {
  const at::Tensor eager = shorts({0, 7, -3}), compiled = shorts({1, 7, -3});
  const at::Tensor ref = at::tensor({0.998046875, 7.25, -3.5}, at::kDouble);  // as run_fp64 returns it: int16
  const at::Tensor ref16 = shorts({0, 7, -3}), down = shorts({0, 7, -3}), up = shorts({1, 7, -3});
  int calls = 0;
  Judgement j = judge_tensor(eager, compiled, [&] { return ref16; }, config_with_bounds(down, up, &calls));
  EXPECT_TRUE(j.pass());
  EXPECT_EQ(calls, 1);
  bool overruled = false, explained = false;
  for (const Verdict& v : j.verdicts) {
    overruled = overruled || (v.oracle == "tolerance" && v.overruled_by == "fp64");
    explained = explained || (v.oracle == "fp64" && v.pass && v.why.find("integer cast") != std::string::npos &&
                              v.why.find("the 1 element(s)") != std::string::npos);
  }
  EXPECT_TRUE(overruled);
  EXPECT_TRUE(explained);
  EXPECT_EQ(cast_rounding_elements(eager, compiled, ref, down, up), 1) << "a float64 reference is compared as the output's dtype";
}

TEST(CastRounding, AResultNoReferenceReachesFails) {
  const at::Tensor eager = shorts({0, 7}), compiled = shorts({2, 7});
  const at::Tensor ref = shorts({0, 7}), down = shorts({0, 7}), up = shorts({1, 7});
  int calls = 0;
  EXPECT_FALSE(judge_tensor(eager, compiled, [&] { return ref; }, config_with_bounds(down, up, &calls)).pass());
  EXPECT_EQ(cast_rounding_elements(eager, compiled, ref, down, up), -1);
  // One element reached and another not: still a failure.
  EXPECT_EQ(cast_rounding_elements(shorts({0, 7}), shorts({1, 8}), ref, down, up), -1);
}

TEST(CastRounding, NothingIsExcusedWithoutTheBounds) {
  const at::Tensor eager = shorts({0}), compiled = shorts({1}), ref = shorts({0});
  EXPECT_FALSE(judge_tensor(eager, compiled, [&] { return ref; }, JudgeConfig{}).pass());
  EXPECT_EQ(cast_rounding_elements(eager, compiled, ref, at::Tensor(), shorts({1})), -1);
  // Floats are the tolerance's and the fp64 oracle's, never this rule's.
  EXPECT_EQ(cast_rounding_elements(at::tensor({0.f}), at::tensor({1.f}), at::tensor({0.0}), at::tensor({0.0}),
                                   at::tensor({1.0})),
            -1);
}

}  // namespace
}  // namespace gbc
