// Builder for algebraic identities (config.patterns.identity): a binary op meets its own operand
// (x - x, x / x, min(x, x), x == x) or an identity number (x * 0, x * 1, x + 0, x + -0.0, x / 1,
// pow(x, 0)), the expressions a simplifier rewrites. Each rewrite is right for ordinary values
// and wrong for some special one (x * 0 is NaN for Inf, x - x is NaN for Inf, x + 0 is not -0.0
// for -0.0, x == x is false for NaN), so the operand often first gets NaN, +-Inf or -0.0 in some
// elements (config.patterns.identity_special). A signed zero's identity (x - (-0.0), x - 0.0,
// -0.0 + x, 0.0 - x) is wrong only in the sign of a zero, which the signed_zero oracle judges only
// where IEEE pins it (harness/runner/zero_sign_cone.h): its operand is a fresh input that gets
// -0.0, so that the result's whole cone is exact.
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "harness/fuzz/op_builders.h"

namespace gbc {
namespace {

// The identity numbers each op takes as its second operand.
const std::map<OpId, std::vector<double>>& identity_numbers() {
  static const std::map<OpId, std::vector<double>> numbers = {
      {OpId::Add, {0.0, -0.0}},  {OpId::Sub, {0.0, -0.0}},  {OpId::Mul, {0.0, 1.0, -1.0, -0.0}}, {OpId::Div, {1.0, -1.0}},
      {OpId::Pow, {0.0, 1.0}},   {OpId::Maximum, {}},       {OpId::Minimum, {}},                {OpId::Remainder, {}},
      {OpId::Eq, {}},            {OpId::Ne, {}},            {OpId::Lt, {}},                     {OpId::Le, {}},
      {OpId::Gt, {}},            {OpId::Ge, {}},            {OpId::LogicalAnd, {true}},         {OpId::LogicalOr, {false}}};
  return numbers;
}

// Ops whose result with the same operand twice is an identity (x - x = 0, x / x = 1, ...).
bool takes_itself(OpId op) {
  static const std::set<OpId> ops = {OpId::Sub, OpId::Div, OpId::Maximum,    OpId::Minimum,   OpId::Eq,  OpId::Ne,
                                     OpId::Lt,  OpId::Le,  OpId::Gt,         OpId::Ge,        OpId::Add, OpId::Mul,
                                     OpId::LogicalAnd, OpId::LogicalOr};
  return ops.count(op) != 0;
}

// x with some elements replaced by one of `specials`: where(x > c, x, special).
std::optional<ValueId> with_special_values(GraphBuilder& b, ValueId x, const std::vector<double>& specials) {
  if (b.nodes_left() < 3 || !b.enabled(OpId::Where) || !b.enabled(OpId::Gt)) return x;
  Node cmp;
  cmp.op = OpId::Gt;
  cmp.args = {Arg::of(x), Arg::number(Scalar::from_float(b.pick_one(std::vector<double>{0.0, 0.5, -0.5})))};
  auto mask = b.add_node(std::move(cmp));
  if (!mask) return std::nullopt;
  Node w;
  w.op = OpId::Where;
  w.args = {Arg::of(*mask), Arg::of(x), Arg::number(Scalar::from_float(b.pick_one(specials)))};
  return b.add_node(std::move(w));
}

// The operand of a signed zero's identity: a fresh floating input (a cone the signed_zero oracle
// judges; an existing value is rarely one), else what obtain gives.
std::optional<ValueId> signed_zero_operand(GraphBuilder& b, const Need& need) {
  auto dtype = b.random_dtype([](DType d) { return is_floating(d); });
  if (!dtype) return b.obtain(need, 3);
  return b.new_input(*dtype, b.random_shape(), Domain::Any, false);
}

}  // namespace

bool build_identity(GraphBuilder& b, OpId op) {
  auto numbers = identity_numbers().find(op);
  if (numbers == identity_numbers().end()) return false;
  const bool itself = takes_itself(op) && (numbers->second.empty() || b.chance(0.5));
  if (!itself && numbers->second.empty()) return false;
  const bool logical = op == OpId::LogicalAnd || op == OpId::LogicalOr;
  Need need;
  need.allow_empty = true;
  // x / x needs no zero in x (the value ranges refuse it), so no special values either.
  if (op == OpId::Div && itself) need.domain = Domain::Positive;
  need.dtype_ok = [&](DType d) {
    if (op == OpId::Remainder || op == OpId::Pow) return is_floating(d);
    return !(d == DType::Bool && op == OpId::Sub);
  };
  // add and sub take only zeros as identity numbers (x +- a signed zero); their special-value draw
  // comes before the operand, the other identities' after it as before (same graphs).
  const bool signed_zero = !itself && (op == OpId::Add || op == OpId::Sub);
  auto special = [&b] { return b.config().special_values > 0 && b.pattern(b.config().patterns.identity_special); };
  const bool zero_special = signed_zero && special();
  auto x = zero_special ? signed_zero_operand(b, need) : b.obtain(need, 3);
  if (!x) return false;
  const DType dtype = b.type(*x).dtype;
  if (is_floating(dtype) && need.domain == Domain::Any && (signed_zero ? zero_special : special())) {
    const double inf = std::numeric_limits<double>::infinity();
    x = with_special_values(b, *x, signed_zero ? std::vector<double>{-0.0} : std::vector<double>{std::nan(""), inf, -inf, -0.0});
    if (!x) return false;
  }
  Node n;
  n.op = op;
  if (itself) {
    n.args = {Arg::of(*x), Arg::of(*x)};
  } else {
    const double v = b.pick_one(numbers->second);
    Scalar s = logical || dtype == DType::Bool ? Scalar::from_bool(v != 0)
               : is_floating(dtype)            ? Scalar::from_float(v)
                                               : Scalar::from_int(static_cast<int64_t>(v));
    if (dtype == DType::UInt8 && s.kind == ScalarKind::Int && s.i < 0) return false;  // -1 would wrap around
    n.args = {Arg::of(*x), Arg::number(s)};
    // A zero first in a sub too: 0.0 - x is not -x for x = +0.0.
    if (op != OpId::Div && op != OpId::Pow && b.chance(0.3)) std::swap(n.args[0], n.args[1]);
  }
  return b.add_node(std::move(n)).has_value();
}

}  // namespace gbc
