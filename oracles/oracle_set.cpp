#include "oracles/oracle_set.h"

#include <algorithm>

#include "compiler/ir/op_schema.h"
#include "oracles/error_stat.h"
#include "oracles/verdict.h"

namespace gbc {

const std::vector<std::string>& known_oracle_names() {
  static const std::vector<std::string> names = {oracle_name::kTolerance,   oracle_name::kFp64,  oracle_name::kNanInf,
                                                 oracle_name::kDeterminism, oracle_name::kDrift, oracle_name::kDropout,
                                                 oracle_name::kState};
  return names;
}

OracleSet OracleSet::from_config(const CheckConfig& check) {
  OracleSet s;
  if (check.oracles.empty()) return s;
  auto has = [&](const char* n) { return std::find(check.oracles.begin(), check.oracles.end(), n) != check.oracles.end(); };
  s.tolerance = has(oracle_name::kTolerance);
  s.fp64 = has(oracle_name::kFp64);
  s.nan_inf = has(oracle_name::kNanInf);
  s.determinism = has(oracle_name::kDeterminism);
  s.drift = has(oracle_name::kDrift);
  s.dropout = has(oracle_name::kDropout);
  s.state = has(oracle_name::kState);
  return s;
}

std::vector<std::string> OracleSet::names() const {
  std::vector<std::string> out;
  const bool on[] = {tolerance, fp64, nan_inf, determinism, drift, dropout, state};
  for (size_t i = 0; i < known_oracle_names().size(); ++i)
    if (on[i]) out.push_back(known_oracle_names()[i]);
  return out;
}

Diagnostics validate_oracles(const CheckConfig& check) {
  Diagnostics d;
  const auto& known = known_oracle_names();
  std::string all;
  for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
  for (const auto& n : check.oracles) {
    if (std::find(known.begin(), known.end(), n) != known.end()) continue;
    std::string close = closest_name(n, known);
    d.error(check.loc_of("oracle"), "check.oracle: unknown oracle '" + n + "'",
            close.empty() ? "known oracles: " + all : "did you mean '" + close + "'? known: " + all);
  }
  if (!ErrorStat::parse(check.error_stat, check.quantile))
    d.error(check.loc_of("error_stat"), "check.error_stat: unknown statistic '" + check.error_stat + "'",
            "use elementwise, max, mean or quantile");
  return d;
}

}  // namespace gbc
