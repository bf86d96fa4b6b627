// The tolerance outputs are judged with, rtol and atol as torch.testing.assert_close takes them,
// and its defaults per dtype. Header-only: harness/model keeps a model's check.tolerance in these
// types without linking the oracles (and LibTorch). Test: tests/oracles/tolerance_oracle_test.cpp.
#pragma once

#include "compiler/ir/dtype.h"

namespace gbc {

struct Tolerance {
  double rtol = 0.0;
  double atol = 0.0;
};

/// torch.testing.assert_close's defaults for a dtype (exact for integers and bool).
inline Tolerance default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::Float16: return {1e-3, 1e-5};
    case DType::BFloat16: return {1.6e-2, 1e-5};
    case DType::Float32: return {1.3e-6, 1e-5};
    case DType::Float64: return {1e-7, 1e-7};
    default: return {0.0, 0.0};
  }
}

}  // namespace gbc
