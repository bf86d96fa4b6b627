// The drift oracle (tolerance, growth), the dropout oracle (kept fraction and scale, eval
// identity) and the oracle selection.
#include <gtest/gtest.h>

#include <limits>

#include "harness/runner/judge_plan.h"
#include "oracles/drift_oracle.h"
#include "oracles/dropout_oracle.h"
#include "oracles/oracle_set.h"
#include "tests/oracles/oracle_test_util.h"

namespace gbc {
namespace {

std::vector<DriftStep> series(int n, double (*f)(int)) {
  std::vector<DriftStep> s(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) s[static_cast<size_t>(i)].ratio = f(i + 1);
  return s;
}

TEST(DriftOracleTest, BoundedOrLinearGrowthPasses) {
  EXPECT_TRUE(drift_oracle(series(64, [](int) { return 0.3; })).pass);
  EXPECT_TRUE(drift_oracle(series(64, [](int s) { return 0.01 * s; })).pass);
  EXPECT_TRUE(drift_oracle(series(64, [](int s) { return 0.05 * std::sqrt(s); })).pass);
  EXPECT_TRUE(drift_oracle(series(64, [](int s) { return 1e-5 * s * s; })).pass);  // below the noise floor
}

TEST(DriftOracleTest, PassingTheToleranceOrGrowingFasterThanLinearFails) {
  Verdict past = drift_oracle(series(64, [](int s) { return 0.02 * s; }));
  EXPECT_FALSE(past.pass);
  EXPECT_NE(past.why.find("step 50"), std::string::npos) << past.why;
  EXPECT_NE(past.min_passing.find("1.28"), std::string::npos) << past.min_passing;
  Verdict quadratic = drift_oracle(series(64, [](int s) { return 2e-4 * s * s; }));
  EXPECT_FALSE(quadratic.pass);
  EXPECT_NE(quadratic.why.find("faster than linearly"), std::string::npos) << quadratic.why;
}

TEST(DropoutOracleTest, AnotherMaskPassesAWrongScaleOrRateFails) {
  at::Tensor x = testing::randn({4000}, 7);
  at::manual_seed(123);
  at::Tensor y = at::dropout(x, 0.3, true);
  const DropoutSpec spec{0.3, true, {1.3e-6, 1e-5}};
  EXPECT_TRUE(dropout_oracle(x, y, spec).pass);
  at::Tensor mask = y.ne(0);
  EXPECT_FALSE(dropout_oracle(x, x * mask, spec).pass);           // not scaled by 1/(1-p)
  EXPECT_FALSE(dropout_oracle(x, at::dropout(x, 0.5, true) * (0.5 / 0.7), spec).pass);  // keeps 50%, not 70%
  EXPECT_TRUE(dropout_oracle(x, x.clone(), {0.3, false, {}}).pass);
  EXPECT_FALSE(dropout_oracle(x, y, {0.3, false, {}}).pass);  // eval mode is the identity
}

// Eager's dropout argument rounded through bfloat16 (eager's own rounding), the compiled path's
// kept values from the float32 value: beyond the tolerance of eager's x, yet the more accurate, so
// with the float64 reference's x they pass; a wrong scale, or values worse than eager's, still fail.
TEST(DropoutOracleTest, KeptValuesTheFloat64ReferenceAgreesWithPass) {
  at::Tensor x64 = testing::randn({4000}, 8).to(at::kDouble);
  at::Tensor eager_x = x64.to(at::kBFloat16).to(at::kDouble);
  at::manual_seed(321);
  at::Tensor mask = at::rand({4000}, at::kDouble).ge(0.3);
  at::Tensor y = x64.to(at::kFloat).to(at::kDouble) * mask / 0.7;
  DropoutSpec spec;
  spec.p = 0.3;
  spec.tol = {1e-7, 1e-7};
  Verdict without = dropout_oracle(eager_x, y, spec);
  EXPECT_FALSE(without.pass);
  EXPECT_NE(without.why.find("neither 0 nor"), std::string::npos) << without.why;
  spec.input_fp64 = x64;
  Verdict with = dropout_oracle(eager_x, y, spec);
  EXPECT_TRUE(with.pass) << with.why;
  EXPECT_NE(with.why.find("float64 reference"), std::string::npos) << with.why;
  EXPECT_FALSE(dropout_oracle(eager_x, y * 0.7, spec).pass);  // not scaled by 1/(1-p)
  at::Tensor worse = (x64 + 0.05 * testing::randn({4000}, 9).to(at::kDouble)) * mask / 0.7;
  EXPECT_FALSE(dropout_oracle(eager_x, worse, spec).pass);  // farther from float64 than eager's rounding
}

// Eager's argument overflowed (NaN where the float64 reference is finite: a float32 layer_norm of
// a row holding 1.8e38, the fuzz campaign of docs/fuzzing.md); the kept values that are the float64
// reference's pass, others do not.
TEST(DropoutOracleTest, KeptValuesWhereEagerOverflowedAreJudgedByTheFloat64Reference) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  at::Tensor eager_x = at::tensor({nan, 1.0, -1.0, nan}, at::kDouble);
  at::Tensor x64 = at::tensor({-1.0, 1.0, -1.0, 1.0}, at::kDouble);
  DropoutSpec spec;
  spec.p = 0.5;
  spec.tol = {1e-5, 1.3e-6};
  at::Tensor y = at::tensor({0.0, 2.0, -2.0, 2.0}, at::kDouble);
  EXPECT_FALSE(dropout_oracle(eager_x, y, spec).pass) << "without the reference, eager's NaN decides";
  spec.input_fp64 = x64;
  Verdict v = dropout_oracle(eager_x, y, spec);
  EXPECT_TRUE(v.pass) << v.why;
  EXPECT_NE(v.why.find("eager's own overflow"), std::string::npos) << v.why;
  at::Tensor wrong = at::tensor({0.0, 2.0, -2.0, 3.0}, at::kDouble);  // not the reference's kept value
  EXPECT_FALSE(dropout_oracle(eager_x, wrong, spec).pass);
  at::Tensor off_where_eager_is_right = at::tensor({0.0, 2.5, -2.0, 2.0}, at::kDouble);
  EXPECT_FALSE(dropout_oracle(eager_x, off_where_eager_is_right, spec).pass);
}

TEST(OracleSetTest, SelectionAndValidation) {
  CheckConfig c;
  EXPECT_EQ(OracleSet::from_names(c.oracles).names().size(), known_oracle_names().size());
  c.oracles = {"tolerance", "nan_inf"};
  OracleSet s = OracleSet::from_names(c.oracles);
  EXPECT_TRUE(s.tolerance && s.nan_inf);
  EXPECT_FALSE(s.fp64 || s.determinism || s.drift);
  EXPECT_FALSE(validate_oracles(c).has_errors());
  c.oracles = {"tolerence"};
  Diagnostics d = validate_oracles(c);
  ASSERT_TRUE(d.has_errors());
  EXPECT_NE(d.str().find("did you mean 'tolerance'"), std::string::npos) << d.str();
}

}  // namespace
}  // namespace gbc
