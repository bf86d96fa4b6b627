#include "compiler/ir/dim.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace gbc {
namespace {

TEST(DimTest, ConstantsFold) {
  DimExpr e = DimExpr(3) * 4 + 1;
  ASSERT_TRUE(e.is_const());
  EXPECT_EQ(e.value(), 13);
  EXPECT_EQ(floordiv(DimExpr(-7), 2).value(), -4);
  EXPECT_EQ(ceildiv(DimExpr(7), 2).value(), 4);
}

TEST(DimTest, PrintsReadably) {
  DimExpr b = DimExpr::symbol("B");
  EXPECT_EQ((b * 64).str(), "B*64");
  EXPECT_EQ(((b + 1) * 2).str(), "(B + 1)*2");
  EXPECT_EQ((b - (b - 1)).str(), "B - (B - 1)");
}

TEST(DimTest, DecidesOverRanges) {
  DimSpace space;
  space.declare("B", {1, 32});
  DimExpr b = DimExpr::symbol("B");
  EXPECT_EQ(space.equal(b * 64, DimExpr(64) * b), Truth::Always);
  EXPECT_EQ(space.equal(b, 16), Truth::Sometimes);
  EXPECT_EQ(space.equal(b, 48), Truth::Never);
  EXPECT_EQ(space.min_of(b * 2), 2);
  EXPECT_EQ(space.max_of(b * 2), 64);
}

TEST(DimTest, LargeSpacesAreSampledWithCorners) {
  DimSpace space;
  space.declare("A", {1, 1000});
  space.declare("B", {1, 1000});
  EXPECT_LT(space.samples().size(), 2000u);
  EXPECT_EQ(space.max_of(DimExpr::symbol("A") * DimExpr::symbol("B")), 1000000);
}

RC_GTEST_PROP(DimProp, EvalMatchesIntegerArithmetic, (int a, int b)) {
  RC_PRE(b != 0);
  DimBindings bind{{"x", a}, {"y", b}};
  DimExpr x = DimExpr::symbol("x"), y = DimExpr::symbol("y");
  RC_ASSERT(*(x + y).eval(bind) == int64_t{a} + b);
  RC_ASSERT(*(x * y).eval(bind) == int64_t{a} * b);
  int64_t q = *floordiv(x, y).eval(bind);
  RC_ASSERT(q * b <= a || b < 0);
  RC_ASSERT(*floordiv(x, y).eval(bind) == floordiv(DimExpr(a), DimExpr(b)).value());
}

}  // namespace
}  // namespace gbc
