// Shared helpers for the oracle tests: small deterministic tensors.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

namespace gbc::testing {

/// Standard normal values from ATen's CPU generator with a fixed seed.
inline at::Tensor randn(std::vector<int64_t> sizes, uint64_t seed, at::ScalarType dtype = at::kFloat) {
  at::manual_seed(seed);
  return at::randn(sizes, at::TensorOptions().dtype(at::kDouble)).to(dtype);
}

}  // namespace gbc::testing
