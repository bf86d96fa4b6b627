// Bounds of kernel expressions' values from their ops (compiler/kernel/value_bounds.h).
#include "compiler/kernel/value_bounds.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>

namespace gbc::kir {
namespace {

ExprPtr f32(double v) { return constant(DType::Float32, v); }
ExprPtr un(const std::string& name, ExprPtr a) { return op(name, DType::Float32, {std::move(a)}); }
ExprPtr bin(const std::string& name, ExprPtr a, ExprPtr b) { return op(name, DType::Float32, {std::move(a), std::move(b)}); }

TEST(ValueBounds, OpsThatBoundTheirResultAndOpsThatCarryBoundsOn) {
  const ExprPtr x = load(0, DType::Float32);
  EXPECT_TRUE(std::isinf(abs_bound(*x))) << "a load can hold anything";
  EXPECT_TRUE(std::isinf(abs_bound(*un("exp", f32(1.0))))) << "exp is not analysed";
  EXPECT_TRUE(std::isinf(abs_bound(*stage_result(0, DType::Float32))));
  for (const char* unit : {"tanh", "sigmoid", "erf", "sin", "cos"}) EXPECT_EQ(abs_bound(*un(unit, x)), 1.0) << unit;
  EXPECT_EQ(abs_bound(*f32(-2.5)), 2.5);
  EXPECT_EQ(abs_bound(*un("neg", un("tanh", x))), 1.0);
  EXPECT_EQ(abs_bound(*un("abs", f32(-3.0))), 3.0);
  EXPECT_EQ(abs_bound(*un("floor", f32(-0.5))), 1.5) << "floor(-0.5) is -1";
  EXPECT_NEAR(abs_bound(*bin("mul", un("tanh", x), f32(1.5))), 1.5, 1e-5);
  EXPECT_NEAR(abs_bound(*bin("sub", un("sigmoid", x), f32(0.25))), 1.25, 1e-5);
  EXPECT_TRUE(std::isinf(abs_bound(*bin("mul", un("tanh", x), x)))) << "times an unbounded value";
  EXPECT_TRUE(std::isinf(abs_bound(*bin("div", un("tanh", x), f32(2.0))))) << "division is not analysed";
  EXPECT_EQ(abs_bound(*op("where", DType::Float32, {load(1, DType::Bool), un("tanh", x), f32(-3.0)})), 3.0);
  EXPECT_NEAR(abs_bound(*cast(un("tanh", x), DType::Float64)), 1.0, 0.01);
  EXPECT_TRUE(std::isinf(abs_bound(*cast(load(1, DType::Int32), DType::Float32)))) << "integers are not bounded";
}

TEST(ValueBounds, ClampBoundsBothSidesOnlyWithBothLimits) {
  const ExprPtr x = load(0, DType::Float32);
  auto clamp = [&](bool lo, bool hi) {
    auto e = std::make_shared<Expr>(*un("clamp", x));
    e->has_min = lo;
    e->has_max = hi;
    e->min = -4.0;
    e->max = 6.0;
    return e;
  };
  EXPECT_EQ(abs_bound(*clamp(true, true)), 6.0);
  EXPECT_TRUE(std::isinf(abs_bound(*clamp(true, false)))) << "clamp(min=-4) of an unbounded x";
  EXPECT_TRUE(std::isinf(abs_bound(*clamp(false, true))));
  auto bounded_max = std::make_shared<Expr>(*un("clamp", un("tanh", x)));
  bounded_max->has_max = true;
  bounded_max->max = 0.5;
  EXPECT_EQ(abs_bound(*bounded_max), 1.0) << "clamp(tanh(x), max=0.5) stays within tanh's bound";
}

}  // namespace
}  // namespace gbc::kir
