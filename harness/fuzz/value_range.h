// Bounds on the values a generated tensor can hold, propagated node by node (interval arithmetic),
// so that the graph generator keeps its graphs out of NaN, Inf, integer overflow and ATen's
// run-time errors: log gets positive inputs, exp small ones, divisors exclude zero, var has
// enough elements to divide by. NaN and Inf still appear where they are put on purpose (special
// numbers in args, check.special_values); those are tracked apart, so a NaN or Inf number counts
// as 0 here. Tested in tests/fuzz/value_range_test.cpp.
#pragma once

#include <functional>
#include <optional>

#include "compiler/ir/graph.h"
#include "harness/model/model.h"

namespace gbc {

struct ValueRange {
  double lo = 0.0;
  double hi = 0.0;

  static ValueRange of(double a, double b);
  static ValueRange point(double v) { return {v, v}; }
  bool contains(double v) const { return lo <= v && v <= hi; }
  double magnitude() const;
};

ValueRange range_union(const ValueRange& a, const ValueRange& b);

/// The values `dist` draws for `dtype`: normal distributions are cut at 6 standard deviations
/// (one value in 500 million lies beyond), bool is [0, 1].
ValueRange dist_range(const ValueDist& dist, DType dtype);

/// Whether every value in `range` stays well inside what `dtype` holds: integers without
/// overflow, floats far from overflow (float16 overflows at 65504).
bool range_fits(const ValueRange& range, DType dtype);

/// The range of the output of `node` (already typed, so its output dtype and the dims are known)
/// from the ranges of its value args. nullopt when some args within their ranges would give NaN,
/// Inf or an ATen error: log/sqrt/rsqrt/reciprocal outside their domain, division or remainder
/// by a range holding zero, pow of a negative base, integer pow with a negative exponent, mean,
/// var, argmax or logsumexp over possibly too few elements, batch_norm training on one value
/// per channel; also an integer number that an integer tensor's dtype cannot hold (it would wrap
/// around: -1 with a uint8 tensor is 255). Not for print (no value) or if (its range is the union
/// of its branches).
std::optional<ValueRange> node_range(const Graph& graph, const Node& node,
                                     const std::function<ValueRange(ValueId)>& range_of);

}  // namespace gbc
