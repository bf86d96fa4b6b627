// Input generation: coverage of special values, size-0/1 dims and non-contiguous layouts over 1000
// draws (present when enabled, absent when not), constraints respected, determinism of
// (seed, case, shrink path), and shrinking towards smaller, simpler cases.
#include "harness/inputs/input_generator.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "harness/inputs/case_gen.h"
#include "harness/model/model_loader.h"

namespace gbc {
namespace {

Model model_with(const std::string& check, const std::string& dims = "{B: [1, 6], N: [0, 3]}",
                 const std::string& extra_inputs = "") {
  return load_model_text("format: gbcheck/v1\nname: t\ndims: " + dims +
                             "\ninputs:\n"
                             "  x: {shape: [B, 4], dtype: float32}\n"
                             "  e: {shape: [N], dtype: float32}\n"
                             "  i: {shape: [B], dtype: int32}\n"
                             "  h: {shape: [B, 4], dtype: float16}\n" +
                             extra_inputs +
                             "graph:\n"
                             "  - {id: y, op: add, args: [x, h]}\n"
                             "  - {id: s, op: sum, args: [e]}\n"
                             "  - {id: j, op: neg, args: [i]}\n"
                             "outputs: [y, s, j]\n"
                             "check:\n" +
                             check,
                         "t.yaml");
}

struct Coverage {
  int special = 0, noncontiguous = 0, size1 = 0, size0 = 0, nan = 0, inf = 0, subnormal = 0, huge = 0, negzero = 0;
};

// Counts over float32 and float16 tensors; `natural_halves` false leaves float16 out of the value
// counts, since normal draws below 6e-5 are genuinely subnormal in float16.
Coverage draw_many(const Model& m, int n, bool natural_halves = true) {
  Coverage c;
  InputGenerator gen(m, c10::Device(c10::kCPU));
  for (int k = 0; k < n; ++k) {
    TestCase tc = gen.make_case(k);
    c.special += tc.special_values > 0;
    c.size1 += tc.dims.at("B") == 1;
    c.size0 += tc.dims.at("N") == 0;
    for (const auto& t : tc.tensors) {
      if (!t.is_contiguous()) ++c.noncontiguous;
      if (!at::isFloatingType(t.scalar_type()) || t.numel() == 0) continue;
      if (!natural_halves && t.scalar_type() == at::kHalf) continue;
      at::Tensor d = t.to(at::kDouble);
      c.nan += d.isnan().any().item<bool>();
      c.inf += d.isinf().any().item<bool>();
      at::Tensor a = d.abs();
      const double tiny = t.scalar_type() == at::kHalf ? 6.103515625e-05 : 1.1754943508222875e-38;
      c.subnormal += a.gt(0).logical_and(a.lt(tiny)).any().item<bool>();
      c.huge += a.isfinite().logical_and(a.gt(t.scalar_type() == at::kHalf ? 30000.0 : 1e38)).any().item<bool>();
      c.negzero += d.eq(0).logical_and(d.signbit()).any().item<bool>();
    }
  }
  return c;
}

TEST(InputGeneratorTest, SpecialValuesAndLayoutsAppearWhenEnabled) {
  const Model m = model_with("  special_values: 0.05\n  layouts: any\n");
  const Coverage c = draw_many(m, 1000);
  EXPECT_GT(c.special, 500);
  EXPECT_GT(c.nan, 50);
  EXPECT_GT(c.inf, 50);
  EXPECT_GT(c.subnormal, 50);
  EXPECT_GT(c.huge, 50);
  EXPECT_GT(c.negzero, 50);
  EXPECT_GT(c.noncontiguous, 500);
  EXPECT_GT(c.size1, 30);
  EXPECT_GT(c.size0, 30);
}

TEST(InputGeneratorTest, NothingSpecialWhenDisabled) {
  const Model m = model_with("  special_values: 0.0\n  layouts: contiguous\n");
  const Coverage c = draw_many(m, 1000, /*natural_halves=*/false);
  EXPECT_EQ(c.special, 0);
  EXPECT_EQ(c.nan + c.inf + c.subnormal + c.huge + c.negzero, 0);
  EXPECT_EQ(c.noncontiguous, 0);
  EXPECT_GT(c.size1, 30);  // broadcast sizes come from the dims' ranges, not from these switches
}

TEST(InputGeneratorTest, Size1AndSize0OnlyWhereTheRangeAllowsThem) {
  const Model m = model_with("  layouts: any\n", "{B: [2, 6], N: [1, 3]}");
  const Coverage c = draw_many(m, 1000);
  EXPECT_EQ(c.size1, 0);
  EXPECT_EQ(c.size0, 0);
}

TEST(InputGeneratorTest, FirstCasesTakeTheDimExtremes) {
  const Model m = model_with("");
  InputGenerator gen(m, c10::Device(c10::kCPU));
  EXPECT_EQ(gen.make_case(0).dims, (DimBindings{{"B", 6}, {"N", 3}}));
  EXPECT_EQ(gen.make_case(1).dims, (DimBindings{{"B", 1}, {"N", 0}}));
}

TEST(InputGeneratorTest, BoundedDistributionsGetOnlySpecialValuesInsideTheirBounds) {
  Model m = model_with("  special_values: 0.2\n", "{B: [1, 6], N: [0, 3]}",
                       "  l: {shape: [B, 8], dtype: float32, values: {dist: uniform, low: 0.01, high: 10.0}}\n");
  InputGenerator gen(m, c10::Device(c10::kCPU));
  for (int k = 0; k < 300; ++k) {
    at::Tensor l = gen.make_case(k).tensors[4];
    ASSERT_TRUE(l.isfinite().all().item<bool>());
    ASSERT_GE(l.min().item<double>(), 0.01);
    ASSERT_LE(l.max().item<double>(), 10.0);
  }
}

TEST(InputGeneratorTest, IntegersAreDrawnAcrossTheirRange) {
  const Model m = model_with("  special_values: 0.1\n");
  InputGenerator gen(m, c10::Device(c10::kCPU));
  int64_t lo = 0, hi = 0, zeros = 0, total = 0;
  for (int k = 0; k < 200; ++k) {
    at::Tensor i = gen.make_case(k).tensors[2];
    lo = std::min(lo, i.min().item<int64_t>());
    hi = std::max(hi, i.max().item<int64_t>());
    zeros += i.eq(0).sum().item<int64_t>();
    total += i.numel();
  }
  EXPECT_EQ(lo, -10);
  EXPECT_EQ(hi, 10);
  EXPECT_LT(zeros * 5, total);  // about 1 in 21, never "left at zero"
}

TEST(InputGeneratorTest, SameSeedCaseAndPathGiveBitIdenticalTensors) {
  Model m = model_with("  special_values: 0.05\n  layouts: any\n");
  InputGenerator a(m, c10::Device(c10::kCPU)), b(m, c10::Device(c10::kCPU));
  for (int k = 0; k < 20; ++k) {
    TestCase x = a.make_case(k), y = b.make_case(k);
    ASSERT_EQ(x.tensors.size(), y.tensors.size());
    for (size_t t = 0; t < x.tensors.size(); ++t) {
      EXPECT_EQ(x.tensors[t].strides(), y.tensors[t].strides());
      EXPECT_TRUE(at::equal(x.tensors[t].nan_to_num(7.0), y.tensors[t].nan_to_num(7.0)));
    }
  }
}

TEST(InputGeneratorTest, FreshInputsKeepLayoutAndValues) {
  const Model m = model_with("  layouts: any\n");
  InputGenerator gen(m, c10::Device(c10::kCPU));
  for (int k = 0; k < 30; ++k) {
    TestCase tc = gen.make_case(k);
    auto fresh = tc.fresh_inputs();
    for (size_t t = 0; t < fresh.size(); ++t) {
      EXPECT_EQ(fresh[t].strides(), tc.tensors[t].strides());
      EXPECT_TRUE(at::equal(fresh[t], tc.tensors[t]));
      if (fresh[t].numel() > 0) {
        EXPECT_NE(fresh[t].data_ptr(), tc.tensors[t].data_ptr());
      }
    }
  }
}

TEST(InputGeneratorTest, ShrinkPathsReplayAndInvalidOnesAreUsageErrors) {
  Model m = model_with("  special_values: 0.05\n  layouts: any\n");
  InputGenerator gen(m, c10::Device(c10::kCPU));
  // Shrink towards the case where B is smallest while it "fails" (fails: B >= 3).
  auto shrunk = gen.shrink_case(7, {}, [](const TestCase& tc) { return tc.dims.at("B") >= 3; }, 500);
  if (gen.make_case(7).dims.at("B") >= 3) {
    EXPECT_EQ(shrunk.smallest.dims.at("B"), 3);
    EXPECT_EQ(shrunk.smallest.dims.at("N"), 0);
    EXPECT_GT(shrunk.accepted, 0);
    TestCase replay = gen.make_case(7, shrunk.smallest.shrink);
    EXPECT_EQ(replay.dims, shrunk.smallest.dims);
    for (size_t t = 0; t < replay.tensors.size(); ++t)
      EXPECT_TRUE(at::equal(replay.tensors[t].nan_to_num(7.0), shrunk.smallest.tensors[t].nan_to_num(7.0)));
    // Layouts shrink to contiguous and special values away: nothing in "fails" needs them.
    EXPECT_EQ(replay.special_values, 0);
    for (const auto& t : replay.tensors) EXPECT_TRUE(t.is_contiguous());
  }
  EXPECT_THROW(gen.make_case(7, *ShrinkPath::parse("100000")), ModelError);
}

TEST(InputGeneratorTest, ShrinkPathText) {
  EXPECT_EQ(ShrinkPath::parse("0.2.13")->steps, (std::vector<int>{0, 2, 13}));
  EXPECT_EQ(ShrinkPath::parse("0.2.13")->str(), "0.2.13");
  EXPECT_TRUE(ShrinkPath::parse("")->empty());
  EXPECT_FALSE(ShrinkPath::parse("1..2"));
  EXPECT_FALSE(ShrinkPath::parse("1.2."));
  EXPECT_FALSE(ShrinkPath::parse("-1"));
  EXPECT_FALSE(ShrinkPath::parse("a"));
}

TEST(InputGeneratorTest, BoolInputsTakeBothValues) {
  const Model m = model_with("  special_values: 0.1\n", "{B: [1, 6], N: [0, 3]}", "  b: {shape: [B, 8], dtype: bool}\n");
  InputGenerator gen(m, c10::Device(c10::kCPU));
  int64_t trues = 0, total = 0;
  for (int k = 0; k < 100; ++k) {
    at::Tensor b = gen.make_case(k).tensors[4];
    ASSERT_EQ(b.scalar_type(), at::kBool);
    trues += b.sum().item<int64_t>();
    total += b.numel();
  }
  EXPECT_GT(trues * 3, total);  // bernoulli(0.5): about half, never all false
  EXPECT_LT(trues * 3, 2 * total);
}

// A failure that needs one NaN among many special values shrinks to that NaN alone: the kept
// special values are bisected, not cut to a prefix.
TEST(InputGeneratorTest, SpecialValuesShrinkToTheOneTheFailureNeeds) {
  Model m = model_with("  special_values: 0.3\n");
  InputGenerator gen(m, c10::Device(c10::kCPU));
  auto has_nan = [](const TestCase& tc) { return tc.tensors[0].isnan().any().item<bool>(); };
  int checked = 0;
  for (int k = 2; k < 40 && checked < 5; ++k) {
    const TestCase root = gen.make_case(k);
    if (!has_nan(root) || root.special_values < 4) continue;
    ++checked;
    const auto shrunk = gen.shrink_case(k, {}, has_nan, 500);
    ASSERT_FALSE(shrunk.budget_exhausted);
    const TestCase& s = shrunk.smallest;
    EXPECT_EQ(s.tensors[0].isnan().sum().item<int64_t>(), 1) << s.descriptions[0];
    EXPECT_NE(s.descriptions[0].find("1 special value (nan)"), std::string::npos) << s.descriptions[0];
    EXPECT_EQ(s.special_values, 1) << s.descriptions[0];
  }
  EXPECT_EQ(checked, 5);
}

// Every node of a shrink tree is a valid case: dims stay in their ranges and values in their bounds.
RC_GTEST_PROP(InputGeneratorProp, ShrinksStayValid, ()) {
  static const Model m = model_with("  special_values: 0.05\n  layouts: any\n");
  const int index = *rc::gen::inRange(2, 1000);
  rc::Shrinkable<CaseRecipe> tree = case_recipe_tree(m, index, case_seed(0, index));
  auto seq = tree.shrinks();
  int seen = 0;
  while (auto s = seq.next()) {
    const CaseRecipe r = s->value();
    RC_ASSERT(r.dims.at("B") >= 1 && r.dims.at("B") <= 6);
    RC_ASSERT(r.dims.at("N") >= 0 && r.dims.at("N") <= 3);
    if (++seen > 50) break;
  }
}

}  // namespace
}  // namespace gbc
