// Which special values each spec may receive, and that their values are what their names say in
// the target dtype (subnormal stays subnormal, huge stays finite after rounding to float16).
#include "harness/inputs/special_values.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace gbc {
namespace {

bool has(const std::vector<SpecialKind>& kinds, SpecialKind k) {
  return std::find(kinds.begin(), kinds.end(), k) != kinds.end();
}

TEST(SpecialValuesTest, UnboundedFloatsGetEveryKind) {
  auto kinds = special_kinds_for(DType::Float32, ValueDist::default_for(DType::Float32));
  for (SpecialKind k : {SpecialKind::NaN, SpecialKind::PosInf, SpecialKind::NegInf, SpecialKind::PosZero,
                        SpecialKind::NegZero, SpecialKind::PosSubnormal, SpecialKind::NegSubnormal,
                        SpecialKind::PosHuge, SpecialKind::NegHuge})
    EXPECT_TRUE(has(kinds, k)) << special_kind_name(k);
}

TEST(SpecialValuesTest, BoundsExcludeWhatLiesOutside) {
  ValueDist log_input{ValueDist::Kind::Uniform, 0.01, 10.0, true};
  EXPECT_TRUE(special_kinds_for(DType::Float32, log_input).empty());
  ValueDist sym{ValueDist::Kind::Uniform, -1.0, 1.0, true};
  auto kinds = special_kinds_for(DType::Float32, sym);
  EXPECT_FALSE(has(kinds, SpecialKind::NaN));
  EXPECT_FALSE(has(kinds, SpecialKind::PosHuge));
  EXPECT_TRUE(has(kinds, SpecialKind::NegZero));
  EXPECT_TRUE(has(kinds, SpecialKind::PosSubnormal));
  EXPECT_TRUE(special_kinds_for(DType::Bool, ValueDist::default_for(DType::Bool)).empty());
  auto ints = special_kinds_for(DType::Int32, ValueDist::default_for(DType::Int32));
  EXPECT_TRUE(has(ints, SpecialKind::RangeLow) && has(ints, SpecialKind::RangeHigh));
}

TEST(SpecialValuesTest, ValuesKeepTheirKindInTheTargetDtype) {
  Rng rng(3);
  const ValueDist d = ValueDist::default_for(DType::Float16);
  for (int i = 0; i < 100; ++i) {
    at::Tensor sub = at::full({1}, special_value(SpecialKind::PosSubnormal, DType::Float16, d, rng)).to(at::kHalf);
    const double s = sub.to(at::kDouble).item<double>();
    EXPECT_GT(s, 0);
    EXPECT_LT(s, dtype_min_normal(DType::Float16));
    at::Tensor huge = at::full({1}, special_value(SpecialKind::NegHuge, DType::Float16, d, rng)).to(at::kHalf);
    EXPECT_TRUE(huge.isfinite().item<bool>());
    EXPECT_LT(huge.to(at::kDouble).item<double>(), -30000.0);
  }
}

}  // namespace
}  // namespace gbc
