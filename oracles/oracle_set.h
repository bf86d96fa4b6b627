// Which oracles judge a check (`check.oracle`): every oracle that applies when the list is empty,
// else those listed. Whether one applies to a given output (fp64 and nan_inf only to floating
// outputs, determinism only to compiled paths, drift only with check.iterations) is decided where
// it runs; this is the user's selection. Test: tests/oracles/stateful_oracles_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/diagnostics.h"
#include "harness/model/check_config.h"

namespace gbc {

struct OracleSet {
  bool tolerance = true;
  bool fp64 = true;
  bool nan_inf = true;
  bool determinism = true;
  bool drift = true;
  bool dropout = true;
  bool state = true;

  /// Every oracle, or those named in check.oracle (names must be valid: validate_oracles).
  static OracleSet from_config(const CheckConfig& check);
  /// Whether outputs are compared numerically at all (tolerance or fp64).
  bool numeric() const { return tolerance || fp64; }
  /// The enabled names in report order.
  std::vector<std::string> names() const;
};

/// Every oracle name `check.oracle` accepts, in report order.
const std::vector<std::string>& known_oracle_names();

/// Unknown names in check.oracle and an unknown check.error_stat, located at their keys.
Diagnostics validate_oracles(const CheckConfig& check);

}  // namespace gbc
