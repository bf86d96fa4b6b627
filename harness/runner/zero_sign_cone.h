// Which values' zero sign IEEE 754 pins, for the signed_zero oracle (oracles/signed_zero_oracle.h):
// those whose whole value cone is graph inputs, constants and ops that IEEE defines to the bit
// (add, sub, mul, div, neg, casts, views and copies, where, and the comparisons and logical ops
// that choose for it). Any correct compiler gives such a value bit for bit, -0.0 included. IEEE
// leaves the sign of max(-0.0, +0.0) to the implementation, so maximum, minimum, relu, clamp, the
// reductions (and everything else: the math library, normalizations, matmuls) end a cone, as does
// a value that may share storage with one some node writes into (add_, mul_, batch_norm's stats).
// Test: tests/runner/zero_sign_cone_test.cpp.
#pragma once

#include <set>

#include "compiler/ir/graph.h"

namespace gbc {

std::set<ValueId> values_with_pinned_zero_sign(const Graph& graph);

}  // namespace gbc
