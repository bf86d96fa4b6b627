// One thing wrong with a whole config (a struct read from configs/ or built in code): what
// validation reports before a reader places it at the key's file:line:col (config_keys.h).
// Tested through tests/fuzz/fuzz_config_test.cpp and tests/reduce/reduce_config_test.cpp.
#pragma once

#include <string>
#include <vector>

namespace gbc {

struct ConfigProblem {
  /// The keys it concerns, relative to the config's section, the one to blame first
  /// ("max_nodes", "op_weights.matmul").
  std::vector<std::string> keys;
  /// Names the keys: "max_rank must be in [1, 8], got 9".
  std::string message;
};

}  // namespace gbc
