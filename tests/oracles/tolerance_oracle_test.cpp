// The tolerance oracle: agreement passes, a perturbed element fails with the least tolerance that
// would pass, aggregate statistics follow Polygraphy's either-bound rule; RapidCheck properties.
#include "oracles/tolerance_oracle.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "tests/oracles/oracle_test_util.h"

namespace gbc {
namespace {

using testing::kF32;

TEST(ToleranceOracleTest, AgreementPassesAndAPerturbedElementFails) {
  at::Tensor e = testing::randn({16, 16}, 2);
  EXPECT_TRUE(tolerance_oracle(e, e.clone(), {kF32}).pass);
  at::Tensor a = e.clone();
  a[3][4] += 1e-3;
  Verdict v = tolerance_oracle(e, a, {kF32});
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.oracle, "tolerance");
  EXPECT_NE(v.why.find("[3, 4]"), std::string::npos) << v.why;
  EXPECT_NE(v.min_passing.find("rtol"), std::string::npos) << v.min_passing;
}

TEST(ToleranceOracleTest, ShapeDtypeAndIntegersAreExact) {
  at::Tensor e = at::arange(6, at::kInt);
  EXPECT_FALSE(tolerance_oracle(e, e.reshape({2, 3}), {kF32}).pass);
  EXPECT_FALSE(tolerance_oracle(e, e.to(at::kLong), {kF32}).pass);
  at::Tensor a = e.clone();
  a[0] = 1;
  Verdict v = tolerance_oracle(e, a, {Tolerance{0.5, 5}});
  EXPECT_FALSE(v.pass);
  EXPECT_NE(v.min_passing.find("exact"), std::string::npos);
}

TEST(ToleranceOracleTest, AggregateStatisticsForgiveWhatElementwiseDoesNot) {
  at::Tensor e = testing::randn({1000}, 3).abs() + 1;
  at::Tensor a = e.clone();
  a[17] += 0.5;  // one element far off
  EXPECT_FALSE(tolerance_oracle(e, a, {kF32}).pass);
  EXPECT_FALSE(tolerance_oracle(e, a, {kF32, true, {ErrorStat::Kind::Max, 0}}).pass);
  EXPECT_TRUE(tolerance_oracle(e, a, {kF32, true, {ErrorStat::Kind::Quantile, 0.99}}).pass);
  Verdict mean = tolerance_oracle(e, a, {kF32, true, {ErrorStat::Kind::Mean, 0}});
  EXPECT_FALSE(mean.pass);
  EXPECT_NE(mean.min_passing.find("either"), std::string::npos);
}

// Agreement within the tolerance is symmetric when the bound does not depend on which side is
// expected (atol only).
RC_GTEST_PROP(ToleranceOracleProp, SymmetricUnderAtol, ()) {
  const auto n = *rc::gen::inRange<int64_t>(1, 64);
  const auto seed = *rc::gen::arbitrary<uint32_t>();
  const double scale = *rc::gen::element(1e-7, 1e-5, 1e-3);
  at::Tensor e = testing::randn({n}, seed, at::kDouble);
  at::Tensor a = e + scale * testing::randn({n}, seed + 1, at::kDouble);
  const Tolerance tol{0.0, 1e-5};
  RC_ASSERT(tolerance_oracle(e, a, {tol}).pass == tolerance_oracle(a, e, {tol}).pass);
}

// A perturbation beyond the tolerance is always caught, and its min_passing tolerance passes.
RC_GTEST_PROP(ToleranceOracleProp, PerturbationBeyondToleranceIsCaught, ()) {
  const auto n = *rc::gen::inRange<int64_t>(1, 256);
  const auto at_i = *rc::gen::inRange<int64_t>(0, n);
  const double factor = *rc::gen::inRange(2, 1000) / 1.0;
  at::Tensor e = testing::randn({n}, *rc::gen::arbitrary<uint32_t>());
  at::Tensor a = e.clone();
  const double bound = kF32.atol + kF32.rtol * std::fabs(e[at_i].item<double>());
  a[at_i] += static_cast<float>(factor * bound);
  Verdict v = tolerance_oracle(e, a, {kF32});
  RC_ASSERT(!v.pass);
  RC_ASSERT(v.stats.worst_index == std::vector<int64_t>{at_i});
  RC_ASSERT(tolerance_oracle(e, a, {Tolerance{kF32.rtol, v.stats.required_atol * (1 + 1e-9)}}).pass);
}

}  // namespace
}  // namespace gbc
