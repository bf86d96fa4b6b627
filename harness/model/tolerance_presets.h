// configs/tolerances.yaml and the files `--tolerances-config FILE` names: the tolerance each
// floating dtype is judged with when a model's check.tolerance does not say (torch.testing.
// assert_close's defaults, shipped). Integers and bool always compare exactly. The defaults file
// holds every floating dtype with both rtol and atol; an override file names only what it changes.
// Every problem is reported at its file:line:col (ConfigError, exit code 2). Keys:
// docs/configs.md#tolerancesyaml. Test: tests/harness/tolerance_presets_test.cpp; error messages
// are pinned in corpus/config-errors/tolerances/.
#pragma once

#include <map>
#include <string>

#include "compiler/ir/dtype.h"
#include "oracles/tolerance.h"

namespace gbc {

/// A tolerance per floating dtype.
using TolerancePresets = std::map<DType, Tolerance>;

/// configs/tolerances.yaml (read once), then the keys of `override_path` on top when it is not
/// empty. Throws ConfigNotFound when configs/tolerances.yaml is missing, ConfigError when a file
/// is invalid.
TolerancePresets load_tolerance_presets(const std::string& override_path = "");

/// Sets the keys `text` names in `presets`; with `complete`, every floating dtype and both of its
/// keys must be there (the defaults file). Throws ConfigError with every diagnostic.
void read_tolerance_presets(const std::string& text, const std::string& path, bool complete, TolerancePresets& presets);

/// The shipped preset of `dtype` (configs/tolerances.yaml); {0, 0} (exact) for integers and bool.
Tolerance default_tolerance(DType dtype);

}  // namespace gbc
