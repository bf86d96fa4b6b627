// compiler/ir/schema_string.h: ATen schema strings read as text (types without alias annotations,
// defaults, keyword-only arguments after `*`, named and list results); not a schema is an error.
#include "compiler/ir/schema_string.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace gbc {
namespace {

TEST(SchemaString, ArgumentsWithDefaultsAndKeywordOnlyOnes) {
  SchemaSignature s = parse_schema_string("aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor");
  EXPECT_EQ(s.name, "aten::cumsum");
  ASSERT_EQ(s.arguments.size(), 3u);
  EXPECT_EQ(s.arguments[0].type, "Tensor");
  EXPECT_EQ(s.arguments[0].name, "self");
  EXPECT_FALSE(s.arguments[1].has_default);
  EXPECT_FALSE(s.arguments[1].keyword_only);
  EXPECT_EQ(s.arguments[2].type, "ScalarType?");
  EXPECT_EQ(s.arguments[2].name, "dtype");
  EXPECT_TRUE(s.arguments[2].has_default);
  EXPECT_TRUE(s.arguments[2].keyword_only);
  EXPECT_EQ(s.returns, (std::vector<std::string>{"Tensor"}));
}

TEST(SchemaString, AnnotationsBracketsAndResults) {
  SchemaSignature s = parse_schema_string(
      "aten::max_pool2d(Tensor(a!) self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, str mode=\"a,b\") "
      "-> (Tensor values, Tensor(a) indices)");
  ASSERT_EQ(s.arguments.size(), 5u);
  EXPECT_EQ(s.arguments[0].type, "Tensor");
  EXPECT_EQ(s.arguments[2].type, "int[2]");
  EXPECT_EQ(s.arguments[2].name, "stride");
  EXPECT_EQ(s.arguments[4].name, "mode");
  EXPECT_EQ(s.returns, (std::vector<std::string>{"Tensor", "Tensor"}));
  EXPECT_EQ(parse_schema_string("aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]").returns,
            (std::vector<std::string>{"Tensor[]"}));
  EXPECT_THROW(parse_schema_string("hardswish"), std::invalid_argument);
}

}  // namespace
}  // namespace gbc
