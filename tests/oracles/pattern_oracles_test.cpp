// The NaN/Inf pattern oracle, the signed-zero oracle and the determinism oracle: exact, and symmetric.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cstring>

#include "oracles/determinism_oracle.h"
#include "oracles/nan_inf_oracle.h"
#include "oracles/output_judge.h"
#include "oracles/signed_zero_oracle.h"
#include "oracles/tolerance_oracle.h"
#include "tests/oracles/oracle_test_util.h"

namespace gbc {
namespace {

TEST(NanInfOracleTest, ADroppedNanFailsEvenWhereAQuantileToleranceWouldPass) {
  at::Tensor e = testing::randn({200}, 5);
  e[7] = NAN;
  at::Tensor a = e.nan_to_num(0.0);  // a max that swallows the NaN
  EXPECT_TRUE(tolerance_oracle(e, a, {{1.3e-6, 1e-5}, true, {ErrorStat::Kind::Quantile, 0.9}}).pass);
  Verdict v = nan_inf_oracle(e, a);
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.stats.worst_index, std::vector<int64_t>{7});
  EXPECT_NE(v.why.find("NaN at 1 position(s) only in eager"), std::string::npos) << v.why;
}

TEST(NanInfOracleTest, InfinitiesOfEachSignMustAgree) {
  at::Tensor e = at::tensor({INFINITY, -INFINITY, 1.0f});
  EXPECT_TRUE(nan_inf_oracle(e, e.clone()).pass);
  EXPECT_FALSE(nan_inf_oracle(e, at::tensor({-INFINITY, -INFINITY, 1.0f})).pass);
  EXPECT_TRUE(nan_inf_oracle(at::arange(3), at::arange(3) + 1).pass);  // integers have no pattern
}

RC_GTEST_PROP(NanInfOracleProp, Symmetric, ()) {
  const auto n = *rc::gen::inRange<int64_t>(1, 40);
  at::Tensor a = testing::randn({n}, *rc::gen::arbitrary<uint32_t>());
  at::Tensor b = a.clone();
  const auto specials = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 6));
  for (size_t i = 0; i < specials.size() && static_cast<int64_t>(i) < n; ++i) {
    const float v[] = {NAN, INFINITY, -INFINITY, 0.0f, 1.0f, 2.0f};
    (i % 2 ? a : b)[static_cast<int64_t>(i)] = v[specials[i]];
  }
  RC_ASSERT(nan_inf_oracle(a, b).pass == nan_inf_oracle(b, a).pass);
}

TEST(DeterminismOracleTest, ComparesBits) {
  at::Tensor a = at::tensor({0.0f, NAN, 1.0f});
  EXPECT_TRUE(determinism_oracle(a, a.clone()).pass);
  Verdict v = determinism_oracle(a, at::tensor({-0.0f, NAN, 1.0f}));
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.stats.worst_index, std::vector<int64_t>{0});
  // A NaN of another sign or payload is still NaN: not a difference.
  EXPECT_TRUE(determinism_oracle(a, at::tensor({0.0f, -NAN, 1.0f})).pass);
  uint32_t payload = 0x7fc00123;
  float other_nan;
  std::memcpy(&other_nan, &payload, sizeof other_nan);
  EXPECT_TRUE(bitwise_compare(a, at::tensor({0.0f, other_nan, 1.0f})).equal);
  at::Tensor t = testing::randn({4, 6}, 6);
  EXPECT_TRUE(bitwise_compare(t.t(), t.t().contiguous()).equal);
  at::Tensor u = t.clone();
  u[2][3] = std::nextafter(u[2][3].item<float>(), 10.0f);
  BitwiseDiff d = bitwise_compare(t, u);
  EXPECT_EQ(d.differing, 1);
  EXPECT_EQ(d.first_index, (std::vector<int64_t>{2, 3}));
  // at::tensor has no bool overload in LibTorch 1.13: bool tensors come from a comparison.
  EXPECT_FALSE(bitwise_compare(at::tensor({1, 0}).ne(0), at::tensor({1, 1}).ne(0)).equal);
  EXPECT_TRUE(bitwise_compare(at::tensor({1, 0}).ne(0), at::tensor({1, 0}).ne(0)).equal);
}

// Bit comparison does not care which run came first: same verdict, same count, same place.
RC_GTEST_PROP(DeterminismOracleProp, Symmetric, ()) {
  const auto n = *rc::gen::inRange<int64_t>(1, 40);
  at::Tensor a = testing::randn({n}, *rc::gen::arbitrary<uint32_t>());
  at::Tensor b = a.clone();
  const auto flips = *rc::gen::container<std::vector<int64_t>>(rc::gen::inRange<int64_t>(0, n));
  for (int64_t i : flips) b[i] = std::nextafter(b[i].item<float>(), INFINITY);
  const BitwiseDiff ab = bitwise_compare(a, b), ba = bitwise_compare(b, a);
  RC_ASSERT(ab.equal == ba.equal);
  RC_ASSERT(ab.differing == ba.differing);
  RC_ASSERT(ab.first_index == ba.first_index);
  RC_ASSERT(determinism_oracle(a, b).pass == flips.empty());
}

TEST(SignedZeroOracleTest, ComparesTheSignWhereBothAreZero) {
  at::Tensor e = at::tensor({0.0f, -0.0f, 1.0f, 0.0f});
  EXPECT_TRUE(signed_zero_oracle(e, e.clone()).pass);
  Verdict v = signed_zero_oracle(e, at::tensor({0.0f, 0.0f, 1.0f, 1e-30f}));
  EXPECT_FALSE(v.pass);
  EXPECT_EQ(v.stats.mismatched, 1);  // a tiny value against a zero is the tolerance's to judge
  EXPECT_EQ(v.stats.worst_index, std::vector<int64_t>{1});
  EXPECT_NE(v.why.find("(expected -0, got 0)"), std::string::npos) << v.why;
  EXPECT_TRUE(signed_zero_oracle(at::arange(3), at::arange(3)).pass);  // integers have no signed zero
}

// judge_tensor runs it only where IEEE pins the zero's sign (the judge plan says where), and a
// NaN/Inf or value difference is reported before it.
TEST(SignedZeroOracleTest, JudgesOnlyPinnedOutputs) {
  at::Tensor e = at::tensor({-0.0f, 2.0f});
  at::Tensor a = at::tensor({0.0f, 2.0f});
  JudgeConfig cfg;
  cfg.tol = {1.3e-6, 1e-5};
  EXPECT_TRUE(judge_tensor(e, a, nullptr, cfg).pass());
  cfg.zero_sign_pinned = true;
  Judgement j = judge_tensor(e, a, nullptr, cfg);
  ASSERT_FALSE(j.pass());
  EXPECT_EQ(j.failing()->oracle, "signed_zero");
  EXPECT_EQ(judge_tensor(e, at::tensor({0.0f, 3.0f}), nullptr, cfg).failing()->oracle, "tolerance");
  cfg.oracles = OracleSet::from_names({"tolerance", "nan_inf"});
  EXPECT_TRUE(judge_tensor(e, a, nullptr, cfg).pass());
}

}  // namespace
}  // namespace gbc
