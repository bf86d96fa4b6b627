// --tolerances-config, --rtol, --atol and --error-stat: the check's tolerances from the command
// line. --tolerances-config FILE reads presets per dtype on top of configs/tolerances.yaml
// (docs/configs.md); the model's check.tolerance wins over them. --rtol and --atol are as Polygraphy's
// `--rtol 1e-5 out0:1e-3` takes them. Each value is `X` (every floating dtype and every output),
// `DTYPE:X` (float16:1e-2) or `OUTPUT:X` (an output id of the model); the more specific wins
// whatever the order, and each sets only its own field (rtol or atol) over the model's check:
// section. Tests: tests/cli/new_user_test.cpp, tests/cli/config_flags_test.cpp (--tolerances-config).
#pragma once

#include <string>
#include <vector>

#include "harness/model/model.h"

namespace gbc {

struct ToleranceArgs {
  std::string presets_path;  // --tolerances-config; "" = configs/tolerances.yaml alone
  std::vector<std::string> rtol, atol;
  std::string error_stat;  // elementwise | max | mean | quantile | quantile:Q; "" = the model's

  /// Applies the options to model.check; returns "" or what is wrong (for an exit code 2). Throws
  /// ConfigError for an invalid tolerances file, ConfigNotFound when configs/ lacks one.
  std::string apply(Model& model) const;
};

}  // namespace gbc
