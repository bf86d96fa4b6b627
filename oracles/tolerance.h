// The tolerance outputs are judged with, rtol and atol as torch.testing.assert_close takes them.
// Header-only: harness/model keeps a model's check.tolerance in these types without linking the
// oracles (and LibTorch). The presets per dtype are data: configs/tolerances.yaml
// (harness/model/tolerance_presets.h). Test: tests/oracles/tolerance_oracle_test.cpp.
#pragma once

namespace gbc {

struct Tolerance {
  double rtol = 0.0;
  double atol = 0.0;
};

}  // namespace gbc
