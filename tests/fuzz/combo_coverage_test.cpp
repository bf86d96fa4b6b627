// ComboCoverage (harness/fuzz/combo_coverage.h): each node counts under the dtype it computes in,
// its graph's input layouts and whether NaN/Inf can reach it; `dtypes:` variants count again with
// their own types; the report names the ops never made.
#include "harness/fuzz/combo_coverage.h"

#include <gtest/gtest.h>

#include "harness/model/model_loader.h"

namespace gbc {
namespace {

Model model(const std::string& inputs, const std::string& check) {
  return load_model_text("format: gbcheck/v1\ndims: {N: [1, 4]}\ninputs:\n" + inputs +
                             "graph:\n"
                             "  - {id: h, op: add, args: [x, 1.0]}\n"
                             "  - {id: m, op: gt, args: [h, 0.0]}\n"
                             "  - {id: y, op: where, args: [m, h, x]}\n"
                             "outputs: [y]\n" + check,
                         "combo.yaml");
}

using Combo = ComboCoverage::Combo;

TEST(ComboCoverage, CountsDtypeLayoutAndSpecialValuesPerNode) {
  ComboCoverage cov;
  cov.add(model("  x: {shape: [N], dtype: float32}\n", ""));
  EXPECT_EQ(cov.counts().count(Combo{"add", DType::Float32, "contiguous", false}), 1u);
  EXPECT_EQ(cov.counts().count(Combo{"add", DType::Float32, "contiguous", true}), 0u);

  cov.add(model("  x: {shape: [N], dtypes: [float32, float64]}\n", "check: {layouts: any, special_values: 0.1}\n"));
  EXPECT_EQ(cov.counts().at(Combo{"add", DType::Float32, "strided", true}), 1);
  EXPECT_EQ(cov.counts().at(Combo{"add", DType::Float64, "strided", true}), 1);
  // gt's bool result carries no NaN: where's first operand is its mask, so where counts as bool.
  EXPECT_EQ(cov.counts().count(Combo{"where", DType::Bool, "strided", true}), 1u);
  EXPECT_EQ(cov.graphs(), 2);

  const std::string report = cov.report();
  EXPECT_NE(report.find("graphs: 2\n"), std::string::npos) << report;
  EXPECT_NE(report.find("add float64 strided special 1\n"), std::string::npos) << report;
  EXPECT_NE(report.find("never made:"), std::string::npos) << report;
  EXPECT_NE(report.find(" matmul"), std::string::npos) << report;
}

TEST(ComboCoverage, TheRecompileSequenceCountsAsStrided) {
  ComboCoverage cov;
  cov.add(model("  x: {shape: [N], dtype: float32}\n", "check: {recompile_sequence: true}\n"));
  EXPECT_EQ(cov.counts().count(Combo{"add", DType::Float32, "strided", false}), 1u);
}

}  // namespace
}  // namespace gbc
