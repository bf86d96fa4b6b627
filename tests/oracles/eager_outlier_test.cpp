// Discrete differences settled by the float64 reference (eager_outlier.h, through output_judge):
// a bool or integer element, or a NaN, where eager's rounding is what differs passes, overruling
// tolerance and nan_inf, as does an element where eager overflowed and the reference is finite; a compiled result that differs where eager is right fails, as does one
// with an excused element but another element off; a finite compiled value where the reference
// rounds to Inf in the output's dtype (float32, float16, bfloat16) fails, since Inf is then the
// correctly rounded answer; a data-dependent shape (nonzero) that is the reference's passes; without
// a reference nothing is excused.
#include "oracles/eager_outlier.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "oracles/output_judge.h"

namespace gbc {
namespace {

at::Tensor bools(std::vector<int64_t> v) { return at::tensor(v).to(at::kBool); }
at::Tensor ints(std::vector<int64_t> v) { return at::tensor(v).to(at::kInt); }
at::Tensor floats(std::vector<float> v) { return at::tensor(v); }
at::Tensor doubles(std::vector<double> v) { return at::tensor(v); }

JudgeConfig f32_config() {
  JudgeConfig c;
  c.tol = Tolerance{1.3e-6, 1e-5};
  return c;
}

const Verdict* verdict_of(const Judgement& j, const std::string& oracle) {
  for (const Verdict& v : j.verdicts)
    if (v.oracle == oracle) return &v;
  return nullptr;
}

// logical_not(layer_norm(x)) over one-element rows: exactly 0 before the not, so true; eager's
// float32 arithmetic left a tiny nonzero in element 1, so false there.
TEST(EagerOutlier, ABoolElementDecidedByEagersRoundingPasses) {
  const at::Tensor eager = bools({1, 0, 1}), compiled = bools({1, 1, 1});
  const at::Tensor ref = bools({1, 1, 1});
  Judgement j = judge_tensor(eager, compiled, [&] { return ref; }, f32_config());
  EXPECT_TRUE(j.pass());
  ASSERT_NE(verdict_of(j, "tolerance"), nullptr);
  EXPECT_EQ(verdict_of(j, "tolerance")->overruled_by, "fp64");
  ASSERT_NE(verdict_of(j, "fp64"), nullptr);
  EXPECT_NE(verdict_of(j, "fp64")->why.find("at the 1 element(s)"), std::string::npos) << verdict_of(j, "fp64")->why;
}

TEST(EagerOutlier, ADifferenceWhereEagerIsRightFails) {
  const at::Tensor eager = bools({1, 0, 1}), compiled = bools({1, 0, 0});
  const at::Tensor ref = bools({1, 0, 1});
  EXPECT_FALSE(judge_tensor(eager, compiled, [&] { return ref; }, f32_config()).pass());
  // A difference where neither matches the reference is no better.
  const at::Tensor i_eager = ints({3, 4}), i_compiled = ints({3, 6});
  const at::Tensor i_ref = ints({3, 5});
  EXPECT_FALSE(find_eager_outlier(i_eager, i_compiled, i_ref, {}, {}).eager_is_outlier);
}

TEST(EagerOutlier, AnIntegerCastOfARoundedValuePasses) {
  // to(int32) of 0.99999994f (eager's float32 result) and of 1.0 (exact, and the compiled one).
  const at::Tensor eager = ints({0, 2}), compiled = ints({1, 2});
  const at::Tensor ref = ints({1, 2});
  EXPECT_TRUE(judge_tensor(eager, compiled, [&] { return ref; }, f32_config()).pass());
}

TEST(EagerOutlier, ANaNOnlyInEagerWhereTheReferenceIsFinitePasses) {
  // layer_norm of a row holding a value near the float32 maximum: eager's moments overflow to NaN,
  // the exact result is finite.
  const at::Tensor eager = floats({NAN, 0.5f, -1.0f}), compiled = floats({0.0f, 0.5f, -1.0f});
  const at::Tensor ref = doubles({0.0, 0.5, -1.0});
  Judgement j = judge_tensor(eager, compiled, [&] { return ref; }, f32_config());
  EXPECT_TRUE(j.pass());
  ASSERT_NE(verdict_of(j, "nan_inf"), nullptr);
  EXPECT_EQ(verdict_of(j, "nan_inf")->overruled_by, "fp64");

  // The same with another element beyond the tolerance: not excused.
  const at::Tensor off = floats({0.0f, 0.6f, -1.0f});
  EXPECT_FALSE(judge_tensor(eager, off, [&] { return ref; }, f32_config()).pass());
  // A NaN only in the compiled result, where eager and the reference agree: not excused.
  EXPECT_FALSE(judge_tensor(compiled, eager, [&] { return ref; }, f32_config()).pass());
}

TEST(EagerOutlier, WhereEagerOverflowedAndTheReferenceIsFiniteEagerIsNotJudged) {
  // Both float32 results are off the exact 0.7 where eager's moments overflowed; eager's NaN is no
  // reference for the compiled 0 there.
  const at::Tensor eager = floats({NAN, 0.5f}), compiled = floats({0.0f, 0.5f});
  const at::Tensor ref = doubles({0.7, 0.5});
  EXPECT_TRUE(judge_tensor(eager, compiled, [&] { return ref; }, f32_config()).pass());
  // A NaN the inputs carried is in the reference too: a compiled result that drops it fails.
  const at::Tensor nan_ref = doubles({NAN, 0.5});
  EXPECT_FALSE(judge_tensor(eager, compiled, [&] { return nan_ref; }, f32_config()).pass());
}

// A compiled value finite near the dtype's maximum where eager overflowed: the float64 reference
// decides in the output's dtype whether Inf is the correctly rounded answer (then the finite value
// is an overflow bug) or eager merely overflowed (then it is excused).
void expect_overflow_decided_in_dtype(at::ScalarType dtype, double max, double beyond) {
  SCOPED_TRACE(std::string(c10::toString(dtype)));
  JudgeConfig config = f32_config();
  config.tol = Tolerance{1e-2, 1e-2};
  const at::Tensor eager = floats({INFINITY, 1.0f}).to(dtype);
  const at::Tensor compiled = doubles({max, 1.0}).to(dtype);
  ASSERT_TRUE(std::isfinite(compiled[0].item<double>()));
  const at::Tensor inf_ref = doubles({beyond, 1.0});
  ASSERT_TRUE(std::isinf(inf_ref.to(dtype)[0].item<double>())) << "the test's reference must round to Inf";
  Judgement wrong = judge_tensor(eager, compiled, [&] { return inf_ref; }, config);
  EXPECT_FALSE(wrong.pass());
  EXPECT_FALSE(find_eager_outlier(eager, compiled, inf_ref, {config.tol}, {}).eager_is_outlier);
  // The reference at the dtype's maximum: finite, so eager overflowed and the compiled value is right.
  const at::Tensor finite_ref = doubles({max, 1.0});
  EXPECT_TRUE(judge_tensor(eager, compiled, [&] { return finite_ref; }, config).pass());
}

TEST(EagerOutlier, AFiniteResultWhereTheReferenceRoundsToInfFailsInEveryFloatDtype) {
  expect_overflow_decided_in_dtype(at::kFloat, std::numeric_limits<float>::max(), 3.5e38);
  expect_overflow_decided_in_dtype(at::kHalf, 65504.0, 66000.0);
  expect_overflow_decided_in_dtype(at::kBFloat16, 3.3895313892515355e38, 3.4e38);
}

TEST(EagerOutlier, OverflowIsDecidedByRoundingToTheDtypeNotByItsMaximum) {
  // Beyond float32's maximum by a quarter of its last ulp the reference still rounds to the
  // maximum (eager's Inf is its overflow); by three quarters it rounds to Inf (eager is right).
  const double max = std::numeric_limits<float>::max(), ulp = std::ldexp(1.0, 104);
  const at::Tensor eager = floats({INFINITY}), compiled = floats({std::numeric_limits<float>::max()});
  const at::Tensor rounds_down = doubles({max + ulp / 4}), rounds_up = doubles({max + 3 * ulp / 4});
  EXPECT_TRUE(judge_tensor(eager, compiled, [&] { return rounds_down; }, f32_config()).pass());
  EXPECT_FALSE(judge_tensor(eager, compiled, [&] { return rounds_up; }, f32_config()).pass());
}

// nonzero(layer_norm(x)) of a constant row (the fuzz campaign of docs/fuzzing.md): gbc's layer_norm
// is exactly 0, as the float64 reference's, eager's leaves a residue in 4 elements, so the indices
// have other shapes. The compiled result that is the reference's passes; one that is neither, or
// a shape eager shares with the reference, fails.
TEST(EagerOutlier, ADataDependentShapeDecidedByEagersRoundingPasses) {
  const at::Tensor eager = at::tensor({0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0}, at::kLong).reshape({4, 3});
  const at::Tensor none = at::zeros({0, 3}, at::kLong);
  Judgement j = judge_tensor(eager, none, [&] { return none; }, f32_config());
  EXPECT_TRUE(j.pass());
  ASSERT_NE(verdict_of(j, "fp64"), nullptr);
  EXPECT_NE(verdict_of(j, "fp64")->why.find("eager's shape [4, 3] is not"), std::string::npos) << verdict_of(j, "fp64")->why;
  EXPECT_FALSE(judge_tensor(eager, none, [&] { return eager; }, f32_config()).pass()) << "eager is the reference's";
  const at::Tensor other = at::tensor({0, 0, 0, 0, 1, 0}, at::kLong).reshape({2, 3});
  EXPECT_FALSE(judge_tensor(eager, other, [&] { return none; }, f32_config()).pass()) << "neither is the reference's";
  EXPECT_FALSE(judge_tensor(eager, none, nullptr, f32_config()).pass()) << "no reference";
  // Floats: within the tolerance of the reference.
  const at::Tensor kept = floats({0.5f, 2.0f}), ref = floats({0.5f, 2.0000001f});
  EXPECT_TRUE(judge_tensor(floats({0.5f, 2.0f, 1e-9f}), kept, [&] { return ref; }, f32_config()).pass());
  EXPECT_FALSE(judge_tensor(floats({0.5f, 2.0f, 1e-9f}), floats({0.5f, 2.5f}), [&] { return ref; }, f32_config()).pass());
}

TEST(EagerOutlier, NothingIsExcusedWithoutAReference) {
  const at::Tensor eager = bools({1, 0}), compiled = bools({1, 1});
  EXPECT_FALSE(judge_tensor(eager, compiled, [] { return at::Tensor(); }, f32_config()).pass());
  JudgeConfig no_fp64 = f32_config();
  no_fp64.oracles.fp64 = false;
  const at::Tensor ref = bools({1, 1});
  EXPECT_FALSE(judge_tensor(eager, compiled, [&] { return ref; }, no_fp64).pass());
}

}  // namespace
}  // namespace gbc
