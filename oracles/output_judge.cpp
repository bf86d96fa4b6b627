#include "oracles/output_judge.h"

#include <ATen/ATen.h>

#include <cmath>
#include <optional>

#include "oracles/eager_outlier.h"
#include "oracles/error_stats.h"
#include "oracles/fp64_oracle.h"
#include "oracles/nan_inf_oracle.h"
#include "oracles/signed_zero_oracle.h"
#include "oracles/threshold_rounding.h"
#include "oracles/tolerance_oracle.h"

namespace gbc {

const Verdict* Judgement::failing() const {
  // The most specific reason first: a NaN/Inf pattern, then fp64 (which has the last word on
  // rounding), then the rest in order; a zero's sign last, as the least a difference can be.
  auto rank = [](const Verdict& v) {
    return v.oracle == oracle_name::kNanInf ? 0 : v.oracle == oracle_name::kFp64 ? 1 : v.oracle == oracle_name::kSignedZero ? 3 : 2;
  };
  const Verdict* best = nullptr;
  for (const auto& v : verdicts)
    if (v.fails() && (!best || rank(v) < rank(*best))) best = &v;
  return best;
}

ErrorStats Judgement::stats() const {
  for (const auto& v : verdicts)
    if (v.oracle == oracle_name::kTolerance) return v.stats;
  return verdicts.empty() ? ErrorStats{} : verdicts.front().stats;
}

Judgement judge_tensor(const at::Tensor& eager, const at::Tensor& compiled, const std::function<at::Tensor()>& fp64,
                       const JudgeConfig& config) {
  Judgement j;
  const bool floating = at::isFloatingType(eager.scalar_type());
  if (config.oracles.nan_inf && floating) j.verdicts.push_back(nan_inf_oracle(eager, compiled));
  if (config.oracles.signed_zero && config.zero_sign_pinned && floating)
    j.verdicts.push_back(signed_zero_oracle(eager, compiled));

  // Dtypes are not rounding, and shapes only where they depend on the data (below).
  const bool comparable = eager.sizes() == compiled.sizes() && eager.scalar_type() == compiled.scalar_type();
  const ToleranceSpec tolerance{config.tol, config.equal_nan, config.stat};
  bool need_fp64 = config.oracles.fp64 && floating && comparable;
  if (config.oracles.tolerance || !comparable) {
    j.verdicts.push_back(tolerance_oracle(eager, compiled, tolerance));
    // Tolerance passing is enough; a NaN/Inf mismatch (infinite error) is never float rounding.
    const Verdict& t = j.verdicts.back();
    if (t.pass || !std::isfinite(t.stats.max_abs)) need_fp64 = false;
  }
  std::optional<at::Tensor> ref;
  auto reference = [&]() -> const at::Tensor& {
    if (!ref) ref = fp64 ? fp64() : at::Tensor();
    return *ref;
  };
  // A difference the references with each thresholded value moved by its tolerance reach is
  // rounding at a threshold (threshold_rounding.h): a verdict of fp64 that overrules the failures.
  auto settled_at_a_threshold = [&]() {
    // What the rule explains: the values (tolerance, fp64) and the NaN/Inf pattern, not a zero's sign.
    const auto explained = [](const Verdict& v) {
      return v.oracle == oracle_name::kTolerance || v.oracle == oracle_name::kFp64 || v.oracle == oracle_name::kNanInf;
    };
    for (const Verdict& v : j.verdicts)
      if (v.fails() && !explained(v)) return false;
    if (!config.oracles.fp64 || !comparable || !config.fp64_threshold_bounds || !reference().defined()) return false;
    const auto [down, up] = config.fp64_threshold_bounds();
    const int64_t rounded = threshold_rounding_elements(eager, compiled, *ref, down, up, config.tol);
    if (rounded <= 0) return false;
    for (auto& v : j.verdicts)
      if (v.fails()) v.overruled_by = oracle_name::kFp64;
    Verdict v;
    v.oracle = oracle_name::kFp64;
    v.why = "rounding at a threshold: at the " + std::to_string(rounded) +
            " element(s) where eager and the compiled result differ, the compiled result is the float64 reference's "
            "with the value under a threshold (an integer or half cast, floor, ceil, round, sign, a comparison, "
            "a remainder) moved within its float tolerance, or an argmax's near-tie broken to its first or last index";
    j.verdicts.push_back(std::move(v));
    return true;
  };
  if (need_fp64 && reference().defined()) {
    Verdict v = fp64_oracle(eager, compiled, *ref, {config.fp64_multiplier, config.tol.atol, config.stat});
    if (v.pass)
      for (auto& t : j.verdicts)
        if (t.oracle == oracle_name::kTolerance && !t.pass) t.overruled_by = oracle_name::kFp64;
    j.verdicts.push_back(std::move(v));
    if (j.failing()) settled_at_a_threshold();
    return j;
  }

  // A difference the float64 reference settles as eager's: the fp64 verdict overrules nan_inf and
  // tolerance.
  auto eagers_own = [&j](const std::string& why) {
    for (auto& v : j.verdicts)
      if (!v.pass && (v.oracle == oracle_name::kNanInf || v.oracle == oracle_name::kTolerance))
        v.overruled_by = oracle_name::kFp64;
    Verdict v;
    v.oracle = oracle_name::kFp64;
    v.why = "eager's own error: " + why;
    j.verdicts.push_back(std::move(v));
  };
  // A data-dependent shape (nonzero of a layer_norm that is exactly 0 where eager leaves a residue)
  // is rounding too (eager_outlier.h).
  if (!comparable && config.oracles.fp64 && j.failing() && reference().defined() &&
      eager_shape_is_outlier(eager, compiled, *ref, tolerance)) {
    eagers_own("the compiled result is the float64 reference's, shape " + index_str(compiled.sizes().vec()) +
               " and every element, and eager's shape " + index_str(eager.sizes().vec()) + " is not");
    return j;
  }

  // A discrete difference (a NaN/Inf pattern, an integer or bool element) may be eager's own
  // rounding: the float64 reference settles it (eager_outlier.h).
  const Verdict* failing = j.failing();
  const bool discrete = failing && (failing->oracle == oracle_name::kNanInf ||
                                    (failing->oracle == oracle_name::kTolerance && !floating));
  if (!discrete || !config.oracles.fp64 || !comparable || !reference().defined()) return j;
  const EagerOutlier outlier =
      find_eager_outlier(eager, compiled, *ref, tolerance, {config.fp64_multiplier, config.tol.atol, config.stat});
  if (!outlier.eager_is_outlier) {
    settled_at_a_threshold();
    return j;
  }
  eagers_own("at the " + std::to_string(outlier.elements) + " element(s) where eager and the compiled result differ" +
             (floating ? " in NaN/Inf" : "") + ", the compiled result is the float64 reference's and eager's is not" +
             (floating ? ", or eager overflowed (the reference is finite)" : ""));
  return j;
}

}  // namespace gbc
