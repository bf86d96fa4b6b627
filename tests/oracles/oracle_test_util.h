// Shared helpers for the oracle tests: small deterministic tensors, float32's tolerance.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "oracles/tolerance.h"

namespace gbc::testing {

/// float32's tolerance in the oracle tests (torch.testing.assert_close's defaults for float32).
inline const Tolerance kF32{1.3e-6, 1e-5};

/// Standard normal values from ATen's CPU generator with a fixed seed.
inline at::Tensor randn(std::vector<int64_t> sizes, uint64_t seed, at::ScalarType dtype = at::kFloat) {
  at::manual_seed(seed);
  return at::randn(sizes, at::TensorOptions().dtype(at::kDouble)).to(dtype);
}

}  // namespace gbc::testing
