// What a kernel expression's values can be, known before it runs: a bound on |value| from the
// ops alone (tanh, sigmoid, erf, sin, cos and clamp bound their results; abs, neg, relu, add, mul,
// where and the float casts carry their operands' bounds on). NaN is outside the analysis: a
// bound holds for every value that is not NaN. The code generators use it to drop range handling
// that a bounded operand never reaches (the CPU's exp of sigmoid(tanh(x)) needs no overflow or
// subnormal selects: kernel_prelude.h's *_exp_bounded). Tests: tests/kernel/value_bounds_test.cpp.
#pragma once

#include "compiler/kernel/kernel_ir.h"

namespace gbc::kir {

/// An upper bound of |v| over every non-NaN value v that e computes; +infinity when the ops give
/// none (loads, host scalars, stage results, divisions, exp, ...).
double abs_bound(const Expr& e);

}  // namespace gbc::kir
