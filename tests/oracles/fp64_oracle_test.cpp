// The fp64 oracle and its combination with the tolerance oracle (output_judge): a float32 sum that
// a kernel reorders passes while a tight allclose fails, at several sizes down to a single
// million-element scalar where eager is luckily accurate; a wrong kernel fails both; the F-test
// widening matches its closed forms; a NaN/Inf only in the compiled result is never excused; the
// float64 reference is made only when needed, at most once.
#include "oracles/fp64_oracle.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "oracles/error_ratio.h"
#include "oracles/output_judge.h"
#include "tests/oracles/oracle_test_util.h"

namespace gbc {
namespace {

// A reduction as a fused kernel does it: blocked partial sums (zero-padded to whole blocks), then
// the partials added in another order than eager's.
at::Tensor reordered_row_sum(const at::Tensor& x, int64_t block) {
  const int64_t pad = (block - x.size(1) % block) % block;
  at::Tensor padded = at::constant_pad_nd(x, {0, pad});
  return padded.reshape({x.size(0), -1, block}).sum(2).flip(1).sum(1);
}

// A kernel with a boundary bug: the first block of each row is never added.
at::Tensor first_block_dropped(const at::Tensor& x, int64_t block) { return x.narrow(1, block, x.size(1) - block).sum(1); }

const Tolerance kTight{1e-9, 1e-9};
using testing::kF32;

JudgeConfig config(Tolerance tol) {
  JudgeConfig c;
  c.tol = tol;
  return c;
}

struct SumSize {
  int64_t rows, n;
};

class ReorderedSum : public ::testing::TestWithParam<SumSize> {};

TEST_P(ReorderedSum, PassesFp64ButFailsATightAllclose) {
  const auto [rows, n] = GetParam();
  at::Tensor x = testing::randn({rows, n}, 11);
  at::Tensor eager = x.sum(1);
  at::Tensor compiled = reordered_row_sum(x, 256);
  at::Tensor fp64 = x.to(at::kDouble).sum(1);
  ASSERT_FALSE(at::equal(eager, compiled)) << "the reordering must change the rounding";
  Judgement j = judge_tensor(eager, compiled, [&] { return fp64; }, config(kTight));
  EXPECT_TRUE(j.pass()) << j.verdicts.back().why;
  ASSERT_EQ(j.verdicts.size(), 3u);  // nan_inf, tolerance (overruled), fp64
  EXPECT_EQ(j.verdicts[1].overruled_by, "fp64");
  JudgeConfig c = config(kTight);
  c.oracles.fp64 = false;
  EXPECT_FALSE(judge_tensor(eager, compiled, [&] { return fp64; }, c).pass());
}

TEST_P(ReorderedSum, AWrongKernelFailsBoth) {
  const auto [rows, n] = GetParam();
  at::Tensor x = testing::randn({rows, n}, 12);
  at::Tensor eager = x.sum(1);
  at::Tensor wrong = first_block_dropped(x, 64);
  at::Tensor fp64 = x.to(at::kDouble).sum(1);
  Judgement j = judge_tensor(eager, wrong, [&] { return fp64; }, config(kF32));
  ASSERT_FALSE(j.pass());
  EXPECT_EQ(j.failing()->oracle, "fp64");
  EXPECT_NE(j.failing()->min_passing.find("fp64_multiplier"), std::string::npos);
  JudgeConfig c = config(kF32);
  c.oracles.fp64 = false;
  EXPECT_FALSE(judge_tensor(eager, wrong, nullptr, c).pass());
}

INSTANTIATE_TEST_SUITE_P(Sizes, ReorderedSum,
                         ::testing::Values(SumSize{8, 1024}, SumSize{8, 65536}, SumSize{3, 100000}, SumSize{1, 1 << 17},
                                           SumSize{1, 1 << 20}),
                         [](const auto& info) {
                           return std::to_string(info.param.rows) + "x" + std::to_string(info.param.n);
                         });

// Seed 13 makes eager's million-element sum 30 times more accurate than its typical error: a bare
// "2 x eager's error" calls the equally good reordered sum a bug.
TEST(Fp64OracleTest, MillionElementSumWhereEagerIsLucky) {
  at::Tensor x = testing::randn({1, 1 << 20}, 13);
  at::Tensor eager = x.sum(1), compiled = reordered_row_sum(x, 256), fp64 = x.to(at::kDouble).sum(1);
  const Fp64Errors err = fp64_errors(eager, compiled, fp64, {});
  ASSERT_GT(err.compiled, 10 * err.eager) << "the premise: eager got lucky";
  EXPECT_EQ(err.samples, 1);
  Judgement j = judge_tensor(eager, compiled, [&] { return fp64; }, config({0, 0}));
  EXPECT_TRUE(j.pass()) << j.verdicts.back().why;
  EXPECT_NE(j.verdicts.back().why.find("small sample"), std::string::npos) << j.verdicts.back().why;
}

// Reordering is rounding whatever the draw: scalar sums over many seeds all pass.
TEST(Fp64OracleTest, ReorderedScalarSumsPassForEverySeed) {
  for (uint64_t seed = 100; seed < 140; ++seed) {
    at::Tensor x = testing::randn({1, 65536}, seed);
    at::Tensor eager = x.sum(1), compiled = reordered_row_sum(x, 256), fp64 = x.to(at::kDouble).sum(1);
    Verdict v = fp64_oracle(eager, compiled, fp64, {2.0, 0.0, {}});
    EXPECT_TRUE(v.pass) << "seed " << seed << ": " << v.why;
  }
}

TEST(Fp64OracleTest, WideningHasTheFDistributionsClosedForms) {
  // k = 1: the ratio of two |normal| draws is |Cauchy|, quantile tan(pi/2 (1 - alpha)).
  EXPECT_NEAR(rms_ratio_quantile(1, 1e-3), std::tan(M_PI / 2 * (1 - 1e-3)), 1e-6);
  // k = 2: P(F(2, 2) > f) = 1 / (1 + f).
  EXPECT_NEAR(rms_ratio_quantile(2, 0.01), std::sqrt(1 / 0.01 - 1), 1e-9);
  // The tabulated F(10, 10) 0.95 quantile, 2.978.
  EXPECT_NEAR(rms_ratio_quantile(10, 0.05), std::sqrt(2.978), 1e-3);
  // The approximation takes over continuously, and large outputs get dynamo's bare multiplier.
  EXPECT_NEAR(rms_ratio_quantile(kExactRatioSamples, 1e-3), rms_ratio_quantile(kExactRatioSamples + 1, 1e-3), 1e-4);
  EXPECT_LT(rms_ratio_quantile(1000000, 1e-3), 1.004);
  EXPECT_EQ(rms_ratio_quantile(0, 1e-3), 1.0);
}

TEST(Fp64OracleTest, ReferenceIsOnlyMadeWhenTheToleranceFails) {
  at::Tensor e = testing::randn({32}, 4);
  int calls = 0;
  auto ref = [&] {
    ++calls;
    return e.to(at::kDouble);
  };
  EXPECT_TRUE(judge_tensor(e, e.clone(), ref, config(kF32)).pass());
  EXPECT_EQ(calls, 0);
  at::Tensor a = e.clone();
  a[0] = NAN;  // asked whether the NaN is eager's own error (eager_outlier.h): the reference is finite
  EXPECT_FALSE(judge_tensor(e, a, ref, config(kF32)).pass());
  EXPECT_EQ(calls, 1);
  a = e + 1e-3;
  EXPECT_FALSE(judge_tensor(e, a, ref, config(kF32)).pass());
  EXPECT_EQ(calls, 2);
}

TEST(Fp64OracleTest, NonFiniteOnlyInTheCompiledResultIsAnInfiniteError) {
  at::Tensor e = at::tensor({1.0f, 2.0f}), c = at::tensor({1.0f, INFINITY});
  Verdict v = fp64_oracle(e, c, e.to(at::kDouble), {});
  EXPECT_FALSE(v.pass);
  EXPECT_NE(v.min_passing.find("none"), std::string::npos);
  EXPECT_TRUE(fp64_oracle(c, c.clone(), e.to(at::kDouble), {}).pass);  // agreeing on Inf is no error
}

TEST(Fp64OracleTest, MinPassingSettingsPass) {
  at::Tensor x = testing::randn({4, 512}, 21);
  at::Tensor eager = x.sum(1), wrong = first_block_dropped(x, 64), fp64 = x.to(at::kDouble).sum(1);
  Verdict v = fp64_oracle(eager, wrong, fp64, {2.0, 1e-5, {}});
  ASSERT_FALSE(v.pass);
  const Fp64Errors err = fp64_errors(eager, wrong, fp64, {});
  const double widening = rms_ratio_quantile(err.samples, kFp64FalseAlarm);
  const double need_multiplier = (err.compiled - 1e-5) / (widening * err.eager);
  EXPECT_TRUE(fp64_oracle(eager, wrong, fp64, {need_multiplier * (1 + 1e-9), 1e-5, {}}).pass);
  EXPECT_FALSE(fp64_oracle(eager, wrong, fp64, {need_multiplier * (1 - 1e-6), 1e-5, {}}).pass);
}

// Dropping the largest term of a sum is caught at every size and seed: the error is that term,
// while eager's rounding error (ATen adds in blocks and pairs) is of order u sqrt(n) max|x| with
// u = 2^-24, below 1e-4 max|x| for n up to 4096 and so far below it even when widened x637.
RC_GTEST_PROP(Fp64OracleProp, ADroppedLargestTermIsAlwaysCaught, ()) {
  const auto rows = *rc::gen::inRange<int64_t>(1, 9);
  const auto n = *rc::gen::inRange<int64_t>(2, 4097);
  at::Tensor x = testing::randn({rows, n}, *rc::gen::arbitrary<uint32_t>());
  at::Tensor largest = x.abs().argmax(1, /*keepdim=*/true);
  at::Tensor dropped = x.scatter(1, largest, 0.0f);
  Verdict v = fp64_oracle(x.sum(1), dropped.sum(1), x.to(at::kDouble).sum(1), {2.0, 1e-5, {}});
  RC_ASSERT(!v.pass);
}

// Scaling every value by a power of two scales every error exactly: the verdict cannot change.
RC_GTEST_PROP(Fp64OracleProp, InvariantUnderPowerOfTwoScaling, ()) {
  const auto n = *rc::gen::inRange<int64_t>(1, 2000);
  const auto shift = *rc::gen::inRange(-20, 21);
  at::Tensor x = testing::randn({2, n}, *rc::gen::arbitrary<uint32_t>());
  at::Tensor eager = x.sum(1), compiled = x.flip(1).sum(1), fp64 = x.to(at::kDouble).sum(1);
  const double s = std::ldexp(1.0, shift);
  RC_ASSERT(fp64_oracle(eager, compiled, fp64, {}).pass == fp64_oracle(eager * s, compiled * s, fp64 * s, {}).pass);
}

}  // namespace
}  // namespace gbc
