// The special values `check.special_values` mixes into inputs: NaN, +-Inf, +-0, subnormals and
// magnitudes near the dtype's overflow for floating tensors; the ends of the range for integer
// tensors. Only values that respect the spec's constraints are used: a bounded distribution
// (uniform low..high, int low..high) gets only the special values inside its bounds, so
// `{dist: uniform, low: 0.01}` for a log input never receives a NaN, a zero or a negative value;
// normal distributions are unbounded and get them all. Test: tests/inputs/special_values_test.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "harness/inputs/rng.h"
#include "harness/model/model.h"

namespace gbc {

enum class SpecialKind : uint8_t {
  NaN,
  PosInf,
  NegInf,
  PosZero,
  NegZero,
  PosSubnormal,
  NegSubnormal,
  PosHuge,  // within a factor 2 of the dtype's largest finite value
  NegHuge,
  RangeLow,   // the distribution's lowest value (integer ranges)
  RangeHigh,  // its highest
};
const char* special_kind_name(SpecialKind kind);

/// The kinds that fit a tensor of `dtype` drawn from `dist`; empty when none does (bool, const,
/// bernoulli, or a range too narrow for any).
std::vector<SpecialKind> special_kinds_for(DType dtype, const ValueDist& dist);

/// A value of `kind` for `dtype` (subnormals and huge values vary, drawn from rng).
double special_value(SpecialKind kind, DType dtype, const ValueDist& dist, Rng& rng);

/// The dtype's largest finite value and smallest normal one (floating dtypes).
double dtype_max(DType dtype);
double dtype_min_normal(DType dtype);

}  // namespace gbc
