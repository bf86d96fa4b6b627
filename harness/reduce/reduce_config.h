// configs/reduce.yaml and the files `gbcheck reduce --reduce-config FILE` names: the reducer's
// schedule (which reduction passes run, in which order, rounds repeated until a whole round makes
// no progress, as C-Vise keeps its pass groups as data) and the few numbers its passes use. The
// defaults file holds every key; an override file names only the keys it changes. Every problem
// is reported at its file:line:col (ConfigError, exit code 2). Keys: docs/configs.md.
// Tested in tests/reduce/reduce_config_test.cpp; error messages are pinned in
// corpus/config-errors/reduce/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/config_problem.h"

namespace gbc {

/// What the value pass does with each input tensor that is not one constant: zero chunks of it,
/// halving the chunk size down to single elements for a tensor of at most small_tensor elements,
/// else down to 1/max_parts of it (checks grow with the parts).
struct ValueReduction {
  int64_t small_tensor = 0;
  int64_t max_parts = 0;
};

struct ReduceConfig {
  /// Reduction passes by name (reduction_pass_names(), reducer.h), run in this order each round.
  std::vector<std::string> schedule;
  ValueReduction values;
  /// Drawn cases of the reduced model tried to see whether it fails with its own inputs.
  int replay_cases = 0;
};

/// Every problem of `config` (unknown pass names, an empty schedule, numbers out of range).
std::vector<ConfigProblem> reduce_config_problems(const ReduceConfig& config);

/// configs/reduce.yaml (read once), then the keys of `override_path` on top when it is not empty.
/// Throws ConfigNotFound when configs/reduce.yaml is missing, ConfigError when a file is invalid.
ReduceConfig load_reduce_config(const std::string& override_path = "");

/// Sets the keys `text` names in `config`; with `complete`, every key must be there (the defaults
/// file). The result must be valid: a problem is reported at the key it concerns in this file.
/// Throws ConfigError with every diagnostic.
void read_reduce_config(const std::string& text, const std::string& path, bool complete, ReduceConfig& config);

}  // namespace gbc
