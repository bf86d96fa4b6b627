// compare_tensors and the error statistics: counts, worst element, tolerance ratio, the least
// passing tolerance (checked by passing with it), quantiles as numpy computes them.
#include "oracles/error_stats.h"

#include <gtest/gtest.h>

#include "tests/oracles/oracle_test_util.h"

namespace gbc {
namespace {

TEST(ErrorStatsTest, WorstElementAndRequiredTolerancePass) {
  at::Tensor e = testing::randn({4, 8}, 1);
  at::Tensor a = e.clone();
  a[2][5] += 0.01;
  ErrorStats s = compare_tensors(e, a, {1.3e-6, 1e-5}, true);
  EXPECT_EQ(s.mismatched, 1);
  EXPECT_EQ(s.worst_index, (std::vector<int64_t>{2, 5}));
  EXPECT_NEAR(s.max_abs, 0.01, 1e-6);
  EXPECT_GT(s.tol_ratio, 100.0);
  EXPECT_EQ(compare_tensors(e, a, {s.required_rtol, 1e-5}, true).mismatched, 0);
  EXPECT_EQ(compare_tensors(e, a, {1.3e-6, s.required_atol}, true).mismatched, 0);
}

TEST(ErrorStatsTest, NanPatternMakesErrorsInfinite) {
  at::Tensor e = at::tensor({1.0f, NAN, 3.0f});
  EXPECT_EQ(compare_tensors(e, e.clone(), {0, 0}, true).mismatched, 0);
  EXPECT_EQ(compare_tensors(e, e.clone(), {0, 0}, false).mismatched, 1);
  ErrorStats s = compare_tensors(e, at::tensor({1.0f, 2.0f, 3.0f}), {1, 1}, true);
  EXPECT_TRUE(std::isinf(s.max_abs));
  EXPECT_TRUE(std::isinf(s.required_rtol));
}

TEST(ErrorStatsTest, QuantileMatchesNumpyLinearInterpolation) {
  at::Tensor err = at::tensor({4.0, 1.0, 3.0, 2.0, 5.0});
  EXPECT_DOUBLE_EQ(reduce_errors(err, {ErrorStat::Kind::Quantile, 0.5}), 3.0);
  EXPECT_DOUBLE_EQ(reduce_errors(err, {ErrorStat::Kind::Quantile, 0.9}), 4.6);
  EXPECT_DOUBLE_EQ(reduce_errors(err, {ErrorStat::Kind::Mean, 0}), 3.0);
  EXPECT_DOUBLE_EQ(reduce_errors(err, {ErrorStat::Kind::Max, 0}), 5.0);
  EXPECT_EQ(ErrorStat::parse("quantile", 0.9)->str(), "quantile 0.9");
  EXPECT_FALSE(ErrorStat::parse("median", 0.5));
}

TEST(ErrorStatsTest, UpperBoundsRoundUp) {
  EXPECT_EQ(fmt_upper(4.131e-3), "0.00414");
  EXPECT_EQ(fmt_upper(4.13e-3), "0.00413");
  EXPECT_EQ(fmt_upper(0.0), "0");
}

}  // namespace
}  // namespace gbc
