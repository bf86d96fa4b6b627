#include "oracles/tolerance_oracle.h"

#include <cmath>

namespace gbc {

std::string tolerance_str(const Tolerance& tol) { return "rtol " + fmt_num(tol.rtol) + " atol " + fmt_num(tol.atol); }

Verdict tolerance_oracle(const at::Tensor& expected, const at::Tensor& actual, const ToleranceSpec& spec) {
  Verdict v;
  v.oracle = oracle_name::kTolerance;
  v.stats = compare_tensors(expected, actual, spec.tol, spec.equal_nan, spec.stat);
  const ErrorStats& s = v.stats;
  if (s.shape_mismatch || s.dtype_mismatch) {
    v.pass = false;
    v.why = s.mismatch_detail;
    v.min_passing = "none: no tolerance fixes a " + std::string(s.shape_mismatch ? "shape" : "dtype") + " mismatch";
    return v;
  }
  const bool integral = !at::isFloatingType(expected.scalar_type());
  if (spec.stat.kind == ErrorStat::Kind::Elementwise) {
    v.pass = s.mismatched == 0;
    if (v.pass) return v;
    v.why = s.summary() + " (" + tolerance_str(spec.tol) + ")";
    if (integral)
      v.min_passing = "none: integer and bool outputs must be exact";
    else if (std::isinf(s.required_rtol))
      v.min_passing = "none: the NaN/Inf pattern differs";
    else
      v.min_passing = "rtol " + fmt_upper(s.required_rtol) + " (atol as set) or atol " + fmt_upper(s.required_atol) +
                      " (rtol as set)";
    return v;
  }
  // Polygraphy: within either bound is enough. Integers have no tolerance: any difference fails.
  const std::string stat = spec.stat.str();
  v.pass = integral ? s.mismatched == 0 : (s.stat_abs <= spec.tol.atol || s.stat_rel <= spec.tol.rtol);
  if (v.pass) return v;
  v.why = "the " + stat + " of the absolute errors is " + fmt_num(s.stat_abs) + " > atol " + fmt_num(spec.tol.atol) +
          " and of the relative errors " + fmt_num(s.stat_rel) + " > rtol " + fmt_num(spec.tol.rtol) + "; " + s.summary();
  v.min_passing = integral ? "none: integer and bool outputs must be exact"
                           : (std::isinf(s.stat_abs) && std::isinf(s.stat_rel))
                                 ? "none: the NaN/Inf pattern differs"
                                 : "atol " + fmt_upper(s.stat_abs) + " or rtol " + fmt_upper(s.stat_rel) + " (either suffices with " +
                                       stat + ")";
  return v;
}

}  // namespace gbc
