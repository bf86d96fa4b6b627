#include "compiler/kernel/value_bounds.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

namespace gbc::kir {
namespace {

constexpr double kUnbounded = std::numeric_limits<double>::infinity();

// Ops whose every non-NaN result lies in [-1, 1], whatever the operand.
bool unit_result(const std::string& op) {
  static const std::set<std::string> ops = {"tanh", "sigmoid", "erf", "sin", "cos", "sign", "hardsigmoid"};
  return ops.count(op) > 0;
}

// The bound of a one-operand op's result from its operand's.
double unary_bound(const std::string& op, double operand) {
  if (op == "neg" || op == "abs" || op == "relu") return operand;
  if (op == "floor" || op == "ceil" || op == "round") return operand + 1.0;  // floor(-0.5) is -1
  // To a nearby float16/bfloat16: at most 2^-8 relatively larger.
  if (op == "round_float16" || op == "round_bfloat16") return operand * (1.0 + 1.0 / 256.0);
  return kUnbounded;
}

}  // namespace

double abs_bound(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Const:
      return is_floating(e.dtype) ? std::fabs(e.f) : std::fabs(static_cast<double>(e.i));
    case ExprKind::Cast:
      // Float to float: the magnitude rounds to the nearest of the new dtype, at most 2^-8
      // relatively larger (bfloat16's step); integers and bools are left unbounded.
      return is_floating(e.dtype) && is_floating(e.args.at(0)->dtype) ? abs_bound(*e.args[0]) * (1.0 + 1.0 / 256.0)
                                                                      : kUnbounded;
    case ExprKind::Op:
      break;
    default:
      return kUnbounded;
  }
  if (unit_result(e.op)) return 1.0;
  if (e.op == "clamp") {
    const double operand = abs_bound(*e.args.at(0));
    if (e.has_min && e.has_max) return std::max(std::fabs(e.min), std::fabs(e.max));
    return std::max(operand, std::fabs(e.has_min ? e.min : e.has_max ? e.max : 0.0));
  }
  if (e.args.size() == 1) return unary_bound(e.op, abs_bound(*e.args[0]));
  if (e.op == "where") return std::max(abs_bound(*e.args.at(1)), abs_bound(*e.args.at(2)));
  if (e.args.size() != 2) return kUnbounded;
  const double a = abs_bound(*e.args[0]), b = abs_bound(*e.args[1]);
  if (a == kUnbounded || b == kUnbounded) return kUnbounded;
  // The sum or product of the bounds, with a relative margin for the rounding of the result.
  constexpr double kRounding = 1.0 + 1e-6;
  if (e.op == "add" || e.op == "sub") return (a + b) * kRounding;
  if (e.op == "mul") return a * b * kRounding;
  if (e.op == "maximum" || e.op == "minimum") return std::max(a, b);
  return kUnbounded;
}

}  // namespace gbc::kir
