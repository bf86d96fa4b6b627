// What an oracle says about one compared tensor: pass or fail, why in one sentence, and the least
// tolerance (or setting) that would have passed, so a user can tell a real divergence from a
// tolerance that is too tight. Every oracle in this folder returns one. Test: tests/oracles/.
#pragma once

#include <string>

#include "oracles/error_stats.h"

namespace gbc {

/// Oracle names as written in `check.oracle` and shown in reports.
namespace oracle_name {
constexpr const char* kTolerance = "tolerance";
constexpr const char* kFp64 = "fp64";
constexpr const char* kNanInf = "nan_inf";
constexpr const char* kSignedZero = "signed_zero";
constexpr const char* kDeterminism = "determinism";
constexpr const char* kDrift = "drift";
constexpr const char* kDropout = "dropout";
constexpr const char* kState = "state";
}  // namespace oracle_name

struct Verdict {
  std::string oracle;
  bool pass = true;
  /// Set on a failing verdict that another oracle overruled (the tolerance oracle failed, the fp64
  /// oracle showed the difference is rounding): the name of that oracle. Such a verdict does not
  /// fail the output.
  std::string overruled_by;
  std::string why;          // one sentence; also set on passes where the reason is not obvious
  std::string min_passing;  // failing verdicts: the least tolerance or setting that would pass
  ErrorStats stats;         // the comparison the verdict rests on (empty for pattern oracles)

  /// Whether this verdict fails the output it judges.
  bool fails() const { return !pass && overruled_by.empty(); }
};

}  // namespace gbc
