// The signed-zero oracle: where eager and the compiled result are both zero, the zeros' signs must
// agree. Run only on outputs whose zero sign IEEE 754 pins (harness/runner/zero_sign_cone.h: every
// op of the value cone rounds exactly, add, sub, mul, div, neg, casts, views, where), since
// max/min/relu/clamp and reductions leave it to the implementation. A simplification that is right
// for every value but -0.0 (`x - 0.0` kept, `x - (-0.0)` folded to x) fails only here.
// Test: tests/oracles/pattern_oracles_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include "oracles/verdict.h"

namespace gbc {

Verdict signed_zero_oracle(const at::Tensor& expected, const at::Tensor& actual);

}  // namespace gbc
