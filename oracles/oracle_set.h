// Which oracles judge a check (`check.oracle`): every oracle that applies when the list is empty,
// else those listed. Whether one applies to a given output (fp64 and nan_inf only to floating
// outputs, signed_zero only to outputs whose zero sign IEEE pins, determinism only to compiled
// paths, drift only with check.iterations) is decided where
// it runs; this is the user's selection. Reading and validating it from a model's check: section
// is harness/runner/judge_plan.h's. Test: tests/oracles/stateful_oracles_test.cpp.
#pragma once

#include <string>
#include <vector>


namespace gbc {

struct OracleSet {
  bool tolerance = true;
  bool fp64 = true;
  bool nan_inf = true;
  bool signed_zero = true;
  bool determinism = true;
  bool drift = true;
  bool dropout = true;
  bool state = true;

  /// Every oracle when `names` is empty, else those named (known_oracle_names() spells them).
  static OracleSet from_names(const std::vector<std::string>& names);
  /// Whether outputs are compared numerically at all (tolerance or fp64).
  bool numeric() const { return tolerance || fp64; }
  /// The enabled names in report order.
  std::vector<std::string> names() const;
};

/// Every oracle name `check.oracle` accepts, in report order.
const std::vector<std::string>& known_oracle_names();

}  // namespace gbc
