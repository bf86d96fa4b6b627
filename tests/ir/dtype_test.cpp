#include "compiler/ir/dtype.h"

#include <gtest/gtest.h>

namespace gbc {
namespace {

using R = PromotionOperand::Rank;

TEST(DTypeTest, NamesRoundTrip) {
  for (DType d : all_dtypes()) EXPECT_EQ(parse_dtype(dtype_name(d)), d);
  EXPECT_FALSE(parse_dtype("float31").has_value());
}

TEST(DTypeTest, PromoteTypesFollowsTorch) {
  EXPECT_EQ(promote_types(DType::UInt8, DType::Int8), DType::Int16);
  EXPECT_EQ(promote_types(DType::Float16, DType::BFloat16), DType::Float32);
  EXPECT_EQ(promote_types(DType::Int64, DType::Float16), DType::Float16);
  EXPECT_EQ(promote_types(DType::Bool, DType::Int8), DType::Int8);
  EXPECT_EQ(promote_types(DType::Int32, DType::Int64), DType::Int64);
  EXPECT_EQ(promote_types(DType::Float32, DType::Float64), DType::Float64);
}

TEST(DTypeTest, NumbersOnlyMatterAcrossCategories) {
  EXPECT_EQ(result_type({{R::Dimensioned, DType::Float16}, {R::Number, DType::Float64}}), DType::Float16);
  EXPECT_EQ(result_type({{R::Dimensioned, DType::Int32}, {R::Number, DType::Float32}}), DType::Float32);
  EXPECT_EQ(result_type({{R::Dimensioned, DType::Int8}, {R::Number, DType::Int64}}), DType::Int8);
  EXPECT_EQ(result_type({{R::Dimensioned, DType::Bool}, {R::Number, DType::Int64}}), DType::Int64);
  EXPECT_EQ(result_type({{R::Dimensioned, DType::Int32}, {R::ZeroDim, DType::Float64}}), DType::Float64);
  EXPECT_EQ(result_type({{R::Dimensioned, DType::Float32}, {R::ZeroDim, DType::Float64}}), DType::Float32);
  EXPECT_EQ(result_type({{R::ZeroDim, DType::Int32}, {R::Number, DType::Float32}}), DType::Float32);
}

}  // namespace
}  // namespace gbc
