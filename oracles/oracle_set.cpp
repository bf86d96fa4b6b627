#include "oracles/oracle_set.h"

#include <algorithm>

#include "oracles/verdict.h"

namespace gbc {

const std::vector<std::string>& known_oracle_names() {
  static const std::vector<std::string> names = {
      oracle_name::kTolerance, oracle_name::kFp64,    oracle_name::kNanInf, oracle_name::kSignedZero,
      oracle_name::kDeterminism, oracle_name::kDrift, oracle_name::kDropout, oracle_name::kState};
  return names;
}

OracleSet OracleSet::from_names(const std::vector<std::string>& names) {
  OracleSet s;
  if (names.empty()) return s;
  auto has = [&](const char* n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  s.tolerance = has(oracle_name::kTolerance);
  s.fp64 = has(oracle_name::kFp64);
  s.nan_inf = has(oracle_name::kNanInf);
  s.signed_zero = has(oracle_name::kSignedZero);
  s.determinism = has(oracle_name::kDeterminism);
  s.drift = has(oracle_name::kDrift);
  s.dropout = has(oracle_name::kDropout);
  s.state = has(oracle_name::kState);
  return s;
}

std::vector<std::string> OracleSet::names() const {
  std::vector<std::string> out;
  const bool on[] = {tolerance, fp64, nan_inf, signed_zero, determinism, drift, dropout, state};
  for (size_t i = 0; i < known_oracle_names().size(); ++i)
    if (on[i]) out.push_back(known_oracle_names()[i]);
  return out;
}

}  // namespace gbc
