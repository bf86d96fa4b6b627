#include "harness/fuzz/value_range.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "harness/model/model_loader.h"

namespace gbc {
namespace {

// A model whose nodes are the cases below; x, y are float32 [B, 4] with B in [1, 3], i int32 [4].
const char* kModel = R"(format: gbcheck/v1
dims: {B: [1, 3]}
inputs:
  x: {shape: [B, 4]}
  y: {shape: [B, 4]}
  i: {shape: [4], dtype: int32}
  j: {shape: [4], dtype: int32}
  s: {shape: [1, 4]}
  u: {shape: [4], dtype: uint8}
graph:
  - {id: log_x, op: log, args: [x]}
  - {id: exp_x, op: exp, args: [x]}
  - {id: div_xy, op: div, args: [x, y]}
  - {id: rem_ij, op: remainder, args: [i, j]}
  - {id: pow_x2, op: pow, args: [x, 2]}
  - {id: pow_xh, op: pow, args: [x, 0.5]}
  - {id: pow_ineg, op: pow, args: [i, -1]}
  - {id: pow_xy, op: pow, args: [x, y]}
  - {id: sum_x, op: sum, args: [x]}
  - {id: sum_x1, op: sum, args: [x], dim: 1}
  - {id: mean_x0, op: mean, args: [x], dim: 0}
  - {id: var_s0, op: var, args: [s], dim: 0}
  - {id: var_s0_c0, op: var, args: [s], dim: 0, correction: 0}
  - {id: mm, op: matmul, args: [x, w]}
  - {id: cast_i8, op: to, args: [x], dtype: int8}
  - {id: add_nan, op: add, args: [x, .nan]}
  - {id: gt_xy, op: gt, args: [x, y]}
  - {id: clamp_x, op: clamp, args: [x], min: -1, max: 0.5}
  - {id: bn, op: batch_norm, args: [s, g, g, g, g], training: true}
  - {id: max_u, op: maximum, args: [u, -1]}
  - {id: max_u0, op: maximum, args: [u, 0]}
  - {id: clamp_u, op: clamp, args: [u], min: -1}
  - {id: round_x, op: round, args: [x]}
outputs: [log_x]
params:
  w: {shape: [4, 5]}
  g: {shape: [4]}
)";

class ValueRangeTest : public ::testing::Test {
 protected:
  void SetUp() override { model_ = load_model_text(kModel, "ranges.yaml"); }

  std::optional<ValueRange> range(const std::string& id) {
    const Graph& g = model_.graph;
    const Node* node = nullptr;
    for_each_node(g.body, [&](const Node& n) {
      if (g.name_of(n.output()) == id) node = &n;
    });
    EXPECT_NE(node, nullptr) << id;
    return node_range(g, *node, [&](ValueId v) { return ranges_.at(g.name_of(v)); });
  }

  Model model_;
  std::map<std::string, ValueRange> ranges_ = {{"x", {-1, 2}}, {"y", {-1, 2}}, {"i", {-8, 8}}, {"j", {-8, 8}},
                                               {"s", {-1, 1}}, {"w", {-0.5, 0.5}}, {"g", {0.5, 1.5}},
                                               {"u", {0, 8}}};
};

void expect_range(const std::optional<ValueRange>& r, double lo, double hi) {
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->lo, lo);
  EXPECT_DOUBLE_EQ(r->hi, hi);
}

TEST_F(ValueRangeTest, DomainsOfUnaryOps) {
  EXPECT_FALSE(range("log_x"));  // log of values down to -1
  ranges_["x"] = {0.5, 4};
  expect_range(range("log_x"), std::log(0.5), std::log(4.0));
  expect_range(range("exp_x"), std::exp(0.5), std::exp(4.0));
}

TEST_F(ValueRangeTest, DivisorsMustExcludeZero) {
  EXPECT_FALSE(range("div_xy"));
  EXPECT_FALSE(range("rem_ij"));  // integer remainder by zero raises in ATen
  ranges_["y"] = {0.5, 2};
  expect_range(range("div_xy"), -2, 4);
  ranges_["j"] = {1, 3};
  expect_range(range("rem_ij"), 0, 3);
}

TEST_F(ValueRangeTest, PowerRules) {
  expect_range(range("pow_x2"), 0, 4);  // an even power of a range around 0
  EXPECT_FALSE(range("pow_xh"));        // the square root of negatives is NaN
  EXPECT_FALSE(range("pow_ineg"));      // ATen: integers to negative integer powers
  EXPECT_FALSE(range("pow_xy"));        // a tensor exponent needs a positive base
  ranges_["x"] = {1, 2};
  ranges_["y"] = {-1, 2};
  expect_range(range("pow_xy"), 0.5, 4);
}

TEST_F(ValueRangeTest, ReductionsCountTheirElements) {
  expect_range(range("sum_x"), -12, 24);  // up to 3 * 4 elements of [-1, 2]
  expect_range(range("sum_x1"), -4, 8);
  expect_range(range("mean_x0"), -1, 2);
  EXPECT_FALSE(range("var_s0"));  // one element with Bessel's correction: 0 / 0
  expect_range(range("var_s0_c0"), 0, 4);
  EXPECT_FALSE(range("bn"));      // training on one value per channel raises in ATen
}

TEST_F(ValueRangeTest, OtherOps) {
  expect_range(range("mm"), -4, 4);  // 4 products of at most 2 * 0.5 each
  expect_range(range("cast_i8"), -1, 2);
  expect_range(range("add_nan"), -1, 2);  // NaN numbers are injected on purpose, counted as 0
  expect_range(range("gt_xy"), 0, 1);
  expect_range(range("clamp_x"), -1, 0.5);
}

TEST_F(ValueRangeTest, NumbersMustFitIntegerTensors) {
  EXPECT_FALSE(range("max_u"));  // -1 becomes 255 in uint8 arithmetic
  expect_range(range("max_u0"), 0, 8);
  EXPECT_FALSE(range("clamp_u"));
}

TEST_F(ValueRangeTest, RoundHalfToEven) {
  ranges_["x"] = {0.5, 2.5};
  expect_range(range("round_x"), 0, 2);  // ATen rounds 0.5 to 0 and 2.5 to 2
}

TEST(ValueRangeFitsTest, Dtypes) {
  EXPECT_TRUE(range_fits({0, 255}, DType::UInt8));
  EXPECT_FALSE(range_fits({-1, 3}, DType::UInt8));
  EXPECT_TRUE(range_fits({-128, 127}, DType::Int8));
  EXPECT_FALSE(range_fits({-128, 128}, DType::Int8));
  EXPECT_FALSE(range_fits({0, 2e4}, DType::Float16));
  EXPECT_TRUE(range_fits({0, 2e4}, DType::Float32));
  EXPECT_FALSE(range_fits({0, INFINITY}, DType::Float64));
  EXPECT_TRUE(range_fits({-5, 5}, DType::Bool));
}

TEST(ValueRangeDistTest, Distributions) {
  ValueDist normal;
  normal.kind = ValueDist::Kind::Normal;
  normal.a = 1;
  normal.b = 0.5;
  ValueRange r = dist_range(normal, DType::Float32);
  EXPECT_DOUBLE_EQ(r.lo, -2);
  EXPECT_DOUBLE_EQ(r.hi, 4);
  ValueDist ints = ValueDist::default_for(DType::Int32);
  r = dist_range(ints, DType::Int32);
  EXPECT_DOUBLE_EQ(r.lo, -10);
  EXPECT_DOUBLE_EQ(r.hi, 10);
  r = dist_range(ints, DType::Bool);
  EXPECT_DOUBLE_EQ(r.hi, 1);
}

}  // namespace
}  // namespace gbc
