// The fp64 oracle and its combination with the tolerance oracle (output_judge): a float32 sum that
// a kernel reorders passes while a tight allclose fails, at several sizes; a wrong kernel fails
// both; NaN/Inf mismatches are never excused; the float64 reference is only made when needed.
#include "oracles/fp64_oracle.h"

#include <gtest/gtest.h>

#include "oracles/output_judge.h"
#include "tests/oracles/oracle_test_util.h"

namespace gbc {
namespace {

// A reduction as a fused kernel might do it: blocked partial sums, then a sum of the blocks.
at::Tensor reordered_row_sum(const at::Tensor& x, int64_t block) {
  return x.reshape({x.size(0), -1, block}).sum(2).flip(1).sum(1);
}

const Tolerance kTight{1e-9, 1e-9};

JudgeConfig config(Tolerance tol) {
  JudgeConfig c;
  c.tol = tol;
  return c;
}

class ReorderedSum : public ::testing::TestWithParam<int64_t> {};

TEST_P(ReorderedSum, PassesFp64ButFailsATightAllclose) {
  const int64_t n = GetParam();
  at::Tensor x = testing::randn({8, n}, 11);
  at::Tensor eager = x.sum(1);
  at::Tensor compiled = reordered_row_sum(x, 64);
  at::Tensor fp64 = x.to(at::kDouble).sum(1);
  ASSERT_FALSE(at::equal(eager, compiled)) << "the reordering must change the rounding";
  Judgement j = judge_tensor(eager, compiled, [&] { return fp64; }, config(kTight));
  EXPECT_TRUE(j.pass()) << j.verdicts.back().why;
  ASSERT_EQ(j.verdicts.size(), 3u);  // nan_inf, tolerance (overruled), fp64
  EXPECT_EQ(j.verdicts[1].overruled_by, "fp64");
  OracleSet tolerance_only;
  tolerance_only.fp64 = false;
  JudgeConfig c = config(kTight);
  c.oracles = tolerance_only;
  EXPECT_FALSE(judge_tensor(eager, compiled, [&] { return fp64; }, c).pass());
}

TEST_P(ReorderedSum, AWrongKernelFailsBoth) {
  const int64_t n = GetParam();
  at::Tensor x = testing::randn({8, n}, 12);
  at::Tensor eager = x.sum(1);
  at::Tensor wrong = x.narrow(1, 1, n - 1).sum(1);  // drops an element
  at::Tensor fp64 = x.to(at::kDouble).sum(1);
  Judgement j = judge_tensor(eager, wrong, [&] { return fp64; }, config({1.3e-6, 1e-5}));
  ASSERT_FALSE(j.pass());
  EXPECT_EQ(j.failing()->oracle, "fp64");
  EXPECT_NE(j.failing()->min_passing.find("fp64_multiplier"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Sizes, ReorderedSum, ::testing::Values(1024, 65536, 1 << 17));

TEST(Fp64OracleTest, MillionElementSum) {
  at::Tensor x = testing::randn({1, 1 << 20}, 13);
  at::Tensor eager = x.sum(1), compiled = reordered_row_sum(x, 256), fp64 = x.to(at::kDouble).sum(1);
  Judgement j = judge_tensor(eager, compiled, [&] { return fp64; }, config({0, 0}));
  EXPECT_TRUE(j.pass()) << j.verdicts.back().why;
}

TEST(Fp64OracleTest, ReferenceIsOnlyMadeWhenTheToleranceFails) {
  at::Tensor e = testing::randn({32}, 4);
  int calls = 0;
  auto ref = [&] {
    ++calls;
    return e.to(at::kDouble);
  };
  EXPECT_TRUE(judge_tensor(e, e.clone(), ref, config({1.3e-6, 1e-5})).pass());
  EXPECT_EQ(calls, 0);
  at::Tensor a = e.clone();
  a[0] = NAN;  // a NaN is never rounding: fp64 is not asked
  EXPECT_FALSE(judge_tensor(e, a, ref, config({1.3e-6, 1e-5})).pass());
  EXPECT_EQ(calls, 0);
  a = e + 1e-3;
  EXPECT_FALSE(judge_tensor(e, a, ref, config({1.3e-6, 1e-5})).pass());
  EXPECT_EQ(calls, 1);
}

TEST(Fp64OracleTest, NonFiniteOnlyInTheCompiledResultIsAnInfiniteError) {
  at::Tensor e = at::tensor({1.0f, 2.0f}), c = at::tensor({1.0f, INFINITY});
  Verdict v = fp64_oracle(e, c, e.to(at::kDouble), {});
  EXPECT_FALSE(v.pass);
  EXPECT_NE(v.min_passing.find("none"), std::string::npos);
  EXPECT_TRUE(fp64_oracle(c, c.clone(), e.to(at::kDouble), {}).pass);  // agreeing on Inf is no error
}

}  // namespace
}  // namespace gbc
