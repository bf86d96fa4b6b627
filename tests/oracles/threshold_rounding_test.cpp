// Results that rounding at a threshold decides (threshold_rounding.h, through output_judge): an
// element where the compiled result is one of the references with the thresholded value moved
// down or up passes, overruling tolerance, fp64 and nan_inf, for integer and for float outputs
// (a branch or a where that a comparison chose); one that none of them reaches fails, as does
// everything without the bounds.
#include "oracles/threshold_rounding.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "oracles/output_judge.h"

namespace gbc {
namespace {

at::Tensor short_values(std::vector<int64_t> v) { return at::tensor(v).to(at::kShort); }
at::Tensor float_values(std::vector<float> v) { return at::tensor(v); }

JudgeConfig config_with_bounds(at::Tensor down, at::Tensor up, int* calls) {
  JudgeConfig c;
  c.tol = Tolerance{1.3e-6, 1e-5};
  c.fp64_threshold_bounds = [down, up, calls] {
    ++*calls;
    return std::make_pair(down, up);
  };
  return c;
}

bool overruled_and_explained(const Judgement& j, const std::string& oracle, const std::string& count) {
  bool overruled = false, explained = false;
  for (const Verdict& v : j.verdicts) {
    overruled = overruled || (v.oracle == oracle && v.overruled_by == "fp64");
    explained = explained || (v.oracle == "fp64" && v.pass && v.why.find("threshold") != std::string::npos &&
                              v.why.find("the " + count + " element(s)") != std::string::npos);
  }
  return overruled && explained;
}

// to(int16) of a bfloat16 batch_norm at the midpoint of 512 and 516 (seed 7400100): eager took
// 512, gbc 516; the exact 514 truncates to 514, the references moved down and up to 512 and 516.
TEST(ThresholdRounding, AnIntegerTheMovedReferenceReachesPasses) {
  const at::Tensor eager = short_values({512, 7, -3}), compiled = short_values({516, 7, -3});
  const at::Tensor ref = at::tensor({514.0, 7.25, -3.5}, at::kDouble);  // as run_fp64 returns it
  const at::Tensor down = short_values({512, 7, -3}), up = short_values({516, 7, -3});
  int calls = 0;
  Judgement j = judge_tensor(eager, compiled, [&] { return ref.to(at::kShort); }, config_with_bounds(down, up, &calls));
  EXPECT_TRUE(j.pass());
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(overruled_and_explained(j, "tolerance", "1"));
  EXPECT_EQ(threshold_rounding_elements(eager, compiled, ref, down, up, Tolerance{}), 1)
      << "a float64 reference is compared as the output's dtype";
}

// if gt(sum(layer_norm(x)), 0) (seed 7401242): the sum is exactly 0, and eager, gbc and the
// reference leave residues of either sign. Eager took the branch giving -inf, gbc the one giving 1;
// the references moved down and up take both.
TEST(ThresholdRounding, AFloatFromABranchTheMovedReferenceTakesPasses) {
  const float inf = std::numeric_limits<float>::infinity();
  const at::Tensor eager = float_values({-inf, 2.5f}), compiled = float_values({1.0f, 2.5000005f});
  const at::Tensor ref = float_values({-inf, 2.5f}).to(at::kDouble), down = ref, up = at::tensor({1.0, 2.5});
  int calls = 0;
  Judgement j = judge_tensor(eager, compiled, [&] { return ref; }, config_with_bounds(down, up, &calls));
  EXPECT_TRUE(j.pass());
  EXPECT_TRUE(overruled_and_explained(j, "nan_inf", "1"));
  // A finite float difference the fp64 oracle rejects is settled the same way (a where that a
  // comparison with a number chose).
  const at::Tensor e2 = float_values({0.25f, 4.0f}), c2 = float_values({0.75f, 4.0f});
  const at::Tensor r2 = at::tensor({0.25, 4.0}), up2 = at::tensor({0.75, 4.0});
  Judgement j2 = judge_tensor(e2, c2, [&] { return r2; }, config_with_bounds(r2, up2, &calls));
  EXPECT_TRUE(j2.pass());
  EXPECT_TRUE(overruled_and_explained(j2, "tolerance", "1"));
}

TEST(ThresholdRounding, AResultNoReferenceReachesFails) {
  const at::Tensor eager = short_values({0, 7}), compiled = short_values({2, 7});
  const at::Tensor ref = short_values({0, 7}), down = short_values({0, 7}), up = short_values({1, 7});
  int calls = 0;
  EXPECT_FALSE(judge_tensor(eager, compiled, [&] { return ref; }, config_with_bounds(down, up, &calls)).pass());
  EXPECT_EQ(threshold_rounding_elements(eager, compiled, ref, down, up, Tolerance{}), -1);
  // One element reached and another not: still a failure.
  EXPECT_EQ(threshold_rounding_elements(short_values({0, 7}), short_values({1, 8}), ref, down, up, Tolerance{}), -1);
  // A float off by more than the tolerance from every reference fails too.
  const at::Tensor fe = float_values({1.0f}), fc = float_values({1.1f}), fr = at::tensor({1.0}), fu = at::tensor({1.05});
  EXPECT_FALSE(judge_tensor(fe, fc, [&] { return fr; }, config_with_bounds(fr, fu, &calls)).pass());
  // Rounding at a threshold explains values, not a zero of the other sign beside them.
  JudgeConfig pinned = config_with_bounds(at::tensor({0.25, 0.0}), at::tensor({0.75, 0.0}), &calls);
  pinned.zero_sign_pinned = true;
  const Judgement j = judge_tensor(float_values({0.25f, 0.0f}), float_values({0.75f, -0.0f}),
                                   [] { return at::tensor({0.25, 0.0}); }, pinned);
  EXPECT_FALSE(j.pass());
  bool signed_zero_fails = false;
  for (const Verdict& v : j.verdicts) signed_zero_fails = signed_zero_fails || (v.oracle == "signed_zero" && v.fails());
  EXPECT_TRUE(signed_zero_fails);
}

TEST(ThresholdRounding, NothingIsExcusedWithoutTheBounds) {
  const at::Tensor eager = short_values({0}), compiled = short_values({1}), ref = short_values({0});
  EXPECT_FALSE(judge_tensor(eager, compiled, [&] { return ref; }, JudgeConfig{}).pass());
  EXPECT_EQ(threshold_rounding_elements(eager, compiled, ref, at::Tensor(), short_values({1}), Tolerance{}), -1);
}

}  // namespace
}  // namespace gbc
