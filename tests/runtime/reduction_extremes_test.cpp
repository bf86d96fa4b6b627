// Every reduction of the op table (sum, mean, amax, amin, prod, logsumexp, var, argmax, softmax,
// log_softmax, layer_norm, batch_norm in both modes) over rows at each float dtype's extremes: the
// largest finite value with either sign, mixed signs, the smallest normal, denormals, infinities
// and NaN, along the last dim and along a non-last one. gbc runs the whole check against eager with
// every oracle (so where eager itself overflows and the float64 reference says so, that is eager's
// own error, and where ATen overflows the right answer is eager's Inf).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "harness/fuzz/cpu_kernels.h"
#include "harness/inputs/user_inputs.h"
#include "tests/runtime/runtime_test_util.h"

namespace gbc {
namespace {

using test::load;

struct Extremes {
  double max, min_normal, denorm_min;
};

Extremes extremes_of(DType d) {
  switch (d) {
    case DType::Float64:
      return {std::numeric_limits<double>::max(), std::numeric_limits<double>::min(),
              std::numeric_limits<double>::denorm_min()};
    case DType::Float16: return {65504.0, 0x1p-14, 0x1p-24};
    case DType::BFloat16: return {0x1.fep127, 0x1p-126, 0x1p-133};
    default:
      return {std::numeric_limits<float>::max(), std::numeric_limits<float>::min(),
              std::numeric_limits<float>::denorm_min()};
  }
}

constexpr int64_t kRowLength = 35;  // two 16-lane vectors and a scalar tail

// Rows of extreme values, each pattern repeated along the row.
std::vector<std::vector<double>> extreme_rows(DType d) {
  const Extremes e = extremes_of(d);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  // Squares overflow the dtype here and the variance (over 34) does not, where a wider type exists
  // to compute in (ATen's float64 kernels overflow as well: float64's spread stays below).
  const double spread = d == DType::Float64 ? std::sqrt(e.max) / 16.0 : 2.0 * std::sqrt(e.max);
  std::vector<std::vector<double>> rows = {
      {e.max},                                         // three copies of 3.25e38 found this
      {-e.max},
      {e.max * 0.95, e.max * 0.96},
      {e.max, -e.max},  // float32 and narrower: the variance fits in float64
      {e.max, 1.0, -1.0, 0.5},
      {spread, -spread},
      {e.min_normal},
      {e.min_normal, -e.min_normal, 2.0 * e.min_normal},
      {e.denorm_min},
      {e.denorm_min, 3.0 * e.denorm_min, 2.0 * e.denorm_min},
      {e.denorm_min, -2.0 * e.denorm_min, e.min_normal},
      {inf, 1.0, 2.0},
      {-inf, -1.0},
      {inf, -inf, 0.0},
      {nan, 1.0, -1.0},
      {0.5, -1.25, 3.0, 2.0},
  };
  // In float64 the variance of max and -max overflows float64 itself, with no wider reference to
  // say which overflow is right (ATen's Welford gives NaN, gbc's two passes Inf).
  if (d == DType::Float64) rows.erase(rows.begin() + 3);
  return rows;
}

at::Tensor rows_tensor(DType d) {
  const std::vector<std::vector<double>> rows = extreme_rows(d);
  at::Tensor t = at::empty({static_cast<int64_t>(rows.size()), kRowLength}, at::kDouble);
  auto a = t.accessor<double, 2>();
  for (size_t r = 0; r < rows.size(); ++r)
    for (int64_t j = 0; j < kRowLength; ++j) a[static_cast<int64_t>(r)][j] = rows[r][static_cast<size_t>(j) % rows[r].size()];
  return t.to(to_aten(d));
}

// One model per dtype: each reduction over the rows (dim -1) and, through a transpose, over a
// non-last dim; batch_norm's channels are the rows.
std::string model_text(DType d, int64_t rows) {
  const std::string dt(dtype_name(d));
  auto has = [&](const char* op) { return cpu_kernel_exists(op_id(op), d); };
  std::string graph, outputs;
  auto node = [&](const std::string& id, const std::string& rest) {
    graph += "  - {id: " + id + ", " + rest + "}\n";
    outputs += (outputs.empty() ? "" : ", ") + id;
  };
  graph += "  - {id: xt, op: transpose, args: [x], dim0: 0, dim1: 1}\n";
  for (const char* op : {"sum", "mean", "amax", "amin", "prod", "logsumexp", "var", "argmax"}) {
    if (!has(op)) continue;
    node(std::string(op) + "_row", std::string("op: ") + op + ", args: [x], dim: -1");
    node(std::string(op) + "_col", std::string("op: ") + op + ", args: [xt], dim: 0");
  }
  if (has("var")) node("var_biased", "op: var, args: [x], dim: -1, correction: 0, keepdim: true");
  for (const char* op : {"softmax", "log_softmax"}) {
    if (!has(op)) continue;
    node(std::string(op) + "_row", std::string("op: ") + op + ", args: [x], dim: -1");
    node(std::string(op) + "_col", std::string("op: ") + op + ", args: [xt], dim: 0");
  }
  if (has("layer_norm")) {
    node("layer_norm_plain", "op: layer_norm, args: [x], normalized_shape: [" + std::to_string(kRowLength) + "]");
    node("layer_norm_affine", "op: layer_norm, args: [x, w, b], normalized_shape: [" + std::to_string(kRowLength) + "]");
  }
  if (has("batch_norm")) {
    node("bn_train", "op: batch_norm, args: [xt, g, bb, rmean, rvar], training: true");
    node("bn_eval", "op: batch_norm, args: [xt, g, bb, emean, evar], training: false");
  }
  const std::string r = std::to_string(rows), k = std::to_string(kRowLength);
  auto param = [&](const std::string& name, const std::string& n, const char* values) {
    return "  " + name + ": {shape: [" + n + "], dtype: " + dt + ", values: " + values + "}\n";
  };
  return "format: gbcheck/v1\nname: reductions_at_extremes_" + dt + "\ninputs:\n  x: {shape: [" + r + ", " + k +
         "], dtype: " + dt + "}\nparams:\n" + param("w", k, "{dist: uniform, low: 0.5, high: 1.5}") +
         param("b", k, "{dist: uniform, low: -0.5, high: 0.5}") + param("g", r, "{dist: uniform, low: 0.5, high: 1.5}") +
         param("bb", r, "{dist: uniform, low: -0.5, high: 0.5}") + param("rmean", r, "{dist: uniform, low: -0.1, high: 0.1}") +
         param("rvar", r, "{dist: uniform, low: 0.5, high: 2.0}") + param("emean", r, "{dist: uniform, low: -0.1, high: 0.1}") +
         param("evar", r, "{dist: uniform, low: 0.5, high: 2.0}") + "graph:\n" + graph + "outputs: [" + outputs + "]\n";
}

TEST(ReductionExtremes, EveryReductionAtEachFloatDtypesExtremesMatchesEager) {
  for (DType d : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16}) {
    SCOPED_TRACE(dtype_name(d));
    at::Tensor x = rows_tensor(d);
    Model model = load(model_text(d, x.size(0)), "reductions_at_extremes.yaml");
    RunOptions opt = run_options_from_model(model);
    opt.backends = {"gbc"};
    opt.cases = 0;
    opt.max_shrink_tries = 0;
    opt.given_cases = {GivenCase{"extreme rows", {}, {x}, {"x: extreme rows"}}};
    CheckReport report = run_check(model, opt);
    ASSERT_TRUE(report.eager_error.empty()) << report.eager_error;
    ASSERT_EQ(report.backends.size(), 1u);
    const BackendReport& b = report.backends[0];
    EXPECT_EQ(b.cases_run, 1);
    for (const CaseFailure& f : b.failures) {
      if (!f.error.empty()) ADD_FAILURE() << f.error;
      for (const OutputCheck& o : f.outputs) ADD_FAILURE() << o.output << " [" << o.oracle << "]: " << o.detail;
    }
    EXPECT_TRUE(b.pass());
  }
}

}  // namespace
}  // namespace gbc
