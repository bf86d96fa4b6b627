// Builders for the elementwise ops: unary, binary, where, clamp, cast, and in-place add_/mul_.
#include <optional>
#include <set>

#include "compiler/ir/infer.h"
#include "compiler/ir/op_schema.h"
#include "harness/fuzz/op_builders.h"

namespace gbc {
namespace {

Domain unary_domain(OpId op) {
  static const std::set<OpId> positive = {OpId::Log, OpId::Log1p, OpId::Sqrt, OpId::Rsqrt, OpId::Reciprocal};
  if (positive.count(op)) return Domain::Positive;
  if (op == OpId::Exp || op == OpId::Expm1) return Domain::Small;
  return Domain::Any;
}

Node unary_node(OpId op, ValueId x) {
  Node n;
  n.op = op;
  n.args = {Arg::of(x)};
  return n;
}

// A number for the other operand of `op` with a `dtype` tensor; mostly of the tensor's own kind.
Scalar operand_number(GraphBuilder& b, OpId op, DType dtype, Domain domain) {
  if (!is_floating(dtype) && b.pattern(b.config().patterns.fractional_numbers)) {
    // Promotion makes the result float: an integer-valued number would hide a wrong promotion.
    if (domain == Domain::Positive) return Scalar::from_float(b.pick_one(std::vector<double>{0.5, 1.25, 2.5, 0.75}));
    if (domain == Domain::Small) return Scalar::from_float(b.pick_one(std::vector<double>{-2.5, 0.5, -0.75, 1.25}));
    return Scalar::from_float(b.pick_one(std::vector<double>{-2.5, 0.5, -0.75, 1.25, -3.5, 0.3}));
  }
  ScalarKind kind = same_kind(dtype);
  if (op == OpId::Sub && kind == ScalarKind::Bool) kind = ScalarKind::Int;
  else if (kind != ScalarKind::Float && b.chance(0.2)) kind = ScalarKind::Float;
  else if (kind == ScalarKind::Float && b.chance(0.25)) kind = ScalarKind::Int;
  return b.number(kind, domain);
}

// A divisor below zero: a negative number, or a positive tensor negated (integer division and
// remainder round and take signs in ways a compiler can get wrong).
std::optional<Arg> negative_divisor(GraphBuilder& b, DType dividend, const SymShape& dividend_shape) {
  if (!is_floating(dividend)) {
    if (dividend == DType::UInt8 || dividend == DType::Bool) return std::nullopt;  // -n would wrap around
    // Not -1, nor a negated tensor that may hold 1: the integer minimum (a cast of inf or NaN)
    // remainder -1 overflows, and ATen itself dies of SIGFPE there (found by the fuzzer).
    return Arg::number(Scalar::from_int(-b.uniform_int(2, 4)));
  }
  if (b.chance(0.5)) return Arg::number(Scalar::from_float(-b.pick_one(std::vector<double>{0.5, 1.5, 2.0, 3.0})));
  Need positive;
  positive.allow_empty = true;
  positive.domain = Domain::Positive;
  positive.dtype_ok = [](DType d) { return d != DType::Bool && d != DType::UInt8; };
  positive.shape_ok = [&b, dividend_shape](const SymShape& s) { return broadcastable(b, dividend_shape, s); };
  positive.make_shape = [&b, dividend_shape] { return b.partner_shape(dividend_shape, true); };
  auto p = b.obtain(positive, 2);
  if (!p) return std::nullopt;
  Node neg;
  neg.op = OpId::Neg;
  neg.args = {Arg::of(*p)};
  auto v = b.add_node(std::move(neg));
  if (!v) return std::nullopt;
  return Arg::of(*v);
}

// pow's exponent as a number: any for a positive float base, natural ones for integer results.
Scalar pow_exponent(GraphBuilder& b, DType base) {
  if (is_floating(base)) return Scalar::from_float(b.pick_one(std::vector<double>{2.0, 3.0, 0.5, -1.0, 1.5, -0.5, 0.0}));
  return Scalar::from_int(b.uniform_int(0, 3));
}

}  // namespace

bool broadcastable(const GraphBuilder& b, const SymShape& x, const SymShape& y) {
  auto out = broadcast_shapes(b.graph().dims, x, y, nullptr);
  return out && static_cast<int>(out->size()) <= b.config().max_rank;
}

bool broadcasts_into(const GraphBuilder& b, const SymShape& self, const SymShape& other) {
  auto out = broadcast_shapes(b.graph().dims, self, other, nullptr);
  if (!out || out->size() != self.size()) return false;
  for (size_t i = 0; i < self.size(); ++i)
    if (!b.always_equal((*out)[i], self[i])) return false;
  return true;
}

ScalarKind same_kind(DType dtype) { return scalar_kind_of(dtype); }

bool build_unary(GraphBuilder& b, OpId op) {
  static const std::set<OpId> no_bool = {OpId::Neg, OpId::Abs, OpId::Relu, OpId::Floor, OpId::Ceil, OpId::Round};
  Need need;
  need.allow_empty = true;
  need.domain = unary_domain(op);
  need.dtype_ok = [&](DType d) {
    if ((op == OpId::Gelu || op == OpId::Silu || op == OpId::Hardswish || op == OpId::Hardsigmoid) && !is_floating(d))
      return false;
    if (no_bool.count(op) && d == DType::Bool) return false;
    return b.kernel_exists(op, d);
  };
  auto x = b.obtain(need);
  if (!x) return false;
  Node n = unary_node(op, *x);
  if (op == OpId::Gelu && b.chance(0.7)) n.attrs["approximate"] = std::string(b.chance(0.5) ? "none" : "tanh");
  return b.add_node(std::move(n)).has_value();
}

bool build_binary(GraphBuilder& b, OpId op) {
  if (b.pattern(b.config().patterns.identity) && build_identity(b, op)) return true;
  bool positional = op == OpId::Div || op == OpId::Remainder || op == OpId::Pow;
  auto dtype_ok = [&](DType d) { return !(d == DType::Bool && (op == OpId::Sub || op == OpId::Pow || op == OpId::Remainder)); };
  Node n;
  n.op = op;
  // 2 ** x: pow's Scalar-Tensor overload.
  if (op == OpId::Pow && b.chance(0.15)) {
    Need e;
    e.allow_empty = true;
    e.dtype_ok = is_floating;
    e.domain = Domain::Small;
    auto x = b.obtain(e);
    if (!x) return false;
    n.args = {Arg::number(Scalar::from_float(b.pick_one(std::vector<double>{2.0, 0.5, 1.5}))), Arg::of(*x)};
    return b.add_node(std::move(n)).has_value();
  }
  Need first;
  first.allow_empty = true;
  first.dtype_ok = dtype_ok;
  if (op == OpId::Pow) first.domain = Domain::Positive;
  auto a = b.obtain(first, 2);
  if (!a) return false;
  const ValueType ta = b.type(*a);
  // Divisors are positive; an integer base gets natural exponents (ATen refuses negative ones).
  Domain second_domain = op == OpId::Div || op == OpId::Remainder ? Domain::Positive
                         : op == OpId::Pow                   ? (is_floating(ta.dtype) ? Domain::Small : Domain::Positive)
                                                         : Domain::Any;
  if (ta.dtype != DType::Bool && (op == OpId::Div || op == OpId::Remainder) && b.nodes_left() >= 2 &&
      b.pattern(b.config().patterns.negative_divisor)) {
    if (std::optional<Arg> d = negative_divisor(b, ta.dtype, ta.shape)) {
      n.args = {Arg::of(*a), *d};
      if (b.add_node(n)) return true;
    }
  }
  Arg second;
  double u = b.uniform();
  std::vector<ValueId> scalars;
  for (ValueId s : b.host_scalars())
    if (b.in_domain(s, second_domain) && dtype_ok(b.type(s).dtype)) scalars.push_back(s);
  if (u < 0.3) {
    second = Arg::number(op == OpId::Pow ? pow_exponent(b, ta.dtype) : operand_number(b, op, ta.dtype, second_domain));
  } else if (u < 0.4 && !scalars.empty()) {
    second = Arg::of(b.pick_one(scalars));
  } else {
    Need other;
    other.allow_empty = true;
    other.domain = second_domain;
    other.dtype_ok = dtype_ok;
    SymShape sa = ta.shape;
    other.shape_ok = [&b, sa](const SymShape& s) { return broadcastable(b, sa, s); };
    other.make_shape = [&b, sa] { return b.partner_shape(sa, true); };
    auto v = b.obtain(other);
    if (!v) return false;
    second = Arg::of(*v);
  }
  n.args = {Arg::of(*a), second};
  if (!positional && b.chance(0.25)) std::swap(n.args[0], n.args[1]);
  return b.add_node(std::move(n)).has_value();
}

bool build_where(GraphBuilder& b) {
  Need any;
  any.allow_empty = true;
  auto x = b.obtain(any, 3);
  if (!x) return false;
  SymShape sx = b.type(*x).shape;
  std::optional<ValueId> cond;
  if (b.chance(0.4) && b.nodes_left() >= 2) {
    // A mask computed from the data, as models do: where(x > 0, x, 0).
    Node cmp;
    cmp.op = b.pick_one(std::vector<OpId>{OpId::Gt, OpId::Lt, OpId::Ne, OpId::Ge});
    cmp.args = {Arg::of(*x), Arg::number(b.number(same_kind(b.type(*x).dtype), Domain::Small))};
    cond = b.add_node(std::move(cmp));
  } else {
    Need mask;
    mask.allow_empty = true;
    mask.dtype_ok = [](DType d) { return d == DType::Bool; };
    mask.shape_ok = [&b, sx](const SymShape& s) { return broadcastable(b, sx, s); };
    mask.make_shape = [&b, sx] { return b.partner_shape(sx, true); };
    cond = b.obtain(mask, 1);
  }
  if (!cond) return false;
  // The third operand must broadcast with both: with the shape x and the mask make together.
  sx = *broadcast_shapes(b.graph().dims, sx, b.type(*cond).shape, nullptr);
  Arg other;
  if (b.chance(0.35)) {
    other = Arg::number(b.number(b.chance(0.8) ? same_kind(b.type(*x).dtype) : ScalarKind::Float, Domain::Any));
  } else {
    Need partner = any;
    partner.shape_ok = [&b, sx](const SymShape& s) { return broadcastable(b, sx, s); };
    partner.make_shape = [&b, sx] { return b.partner_shape(sx, true); };
    auto y = b.obtain(partner, 1);
    if (!y) return false;
    other = Arg::of(*y);
  }
  Node n;
  n.op = OpId::Where;
  n.args = {Arg::of(*cond), Arg::of(*x), other};
  if (b.chance(0.5)) std::swap(n.args[1], n.args[2]);
  return b.add_node(std::move(n)).has_value();
}

bool build_clamp(GraphBuilder& b) {
  Need need;
  need.allow_empty = true;
  need.dtype_ok = [&](DType d) { return d != DType::Bool && b.kernel_exists(OpId::Clamp, d); };
  auto x = b.obtain(need);
  if (!x) return false;
  bool integral = !is_floating(b.type(*x).dtype);
  // Integer tensors take integer bounds (float bounds would change the dtype); float tensors either.
  auto bound = [&](double v) {
    return integral || b.chance(0.3) ? Scalar::from_int(static_cast<int64_t>(v)) : Scalar::from_float(v);
  };
  double lo = b.pick_one(std::vector<double>{-2.0, -1.0, -0.5, 0.0, 1.0});
  double hi = b.pick_one(std::vector<double>{0.5, 1.0, 2.0, 3.0});
  if (b.chance(0.05)) std::swap(lo, hi);  // min > max: ATen gives max everywhere
  Node n;
  n.op = OpId::Clamp;
  n.args = {Arg::of(*x)};
  double u = b.uniform();
  if (u < 0.7) n.attrs["min"] = bound(lo);
  if (u > 0.35) n.attrs["max"] = bound(hi);
  return b.add_node(std::move(n)).has_value();
}

bool build_cast(GraphBuilder& b) {
  Need need;
  need.allow_empty = true;
  auto x = b.obtain(need);
  if (!x) return false;
  DType from = b.type(*x).dtype;
  auto to = b.random_dtype([&](DType d) {
    // NaN or Inf cast to an integer is undefined behaviour in C++ kernels.
    if (is_floating(from) && is_integral(d) && b.facts(*x).special) return false;
    return d != from || b.chance(0.1);
  });
  if (!to) return false;
  Node n;
  n.op = OpId::To;
  n.args = {Arg::of(*x)};
  n.attrs["dtype"] = *to;
  auto out = b.add_node(std::move(n));
  if (out && *to == from) {
    // ATen returns self for a cast to its own dtype.
    b.mark_aliased(*x);
    b.mark_aliased(*out);
  }
  return out.has_value();
}

bool build_in_place(GraphBuilder& b, OpId op) {
  auto self = b.pick([&](ValueId v) { return b.facts(v).writable; });
  if (!self) return false;
  const ValueType ts = b.type(*self);
  DType s = ts.dtype;
  // What can be stored in self: the op's result type promotes to self's (or both are floats).
  auto storable = [s](DType d) {
    DType r = promote_types(s, d);
    return r == s || (is_floating(s) && is_floating(r));
  };
  Arg other;
  const bool number_other = op_schema(op).arg_kind == ArgKind::TensorOrNumber;  // not copy_'s src
  double u = b.uniform();
  std::vector<ValueId> scalars;
  for (ValueId v : b.host_scalars())
    if (storable(b.type(v).dtype)) scalars.push_back(v);
  if (u < 0.4 && number_other) {
    ScalarKind kind = same_kind(s);
    if (kind == ScalarKind::Float && b.chance(0.3)) kind = ScalarKind::Int;
    if (kind == ScalarKind::Int && b.chance(0.15)) kind = ScalarKind::Bool;
    other = Arg::number(b.number(kind, Domain::Any));
  } else if (u < 0.5 && !scalars.empty() && number_other) {
    other = Arg::of(b.pick_one(scalars));
  } else {
    Need partner;
    partner.allow_empty = true;
    partner.dtype_ok = storable;
    SymShape ss = ts.shape;
    partner.shape_ok = [&b, ss](const SymShape& x) { return broadcasts_into(b, ss, x); };
    partner.make_shape = [&b, ss] { return b.partner_shape(ss, false); };
    auto v = b.obtain(partner);
    if (!v) return false;
    other = Arg::of(*v);
  }
  Node n;
  n.op = op;
  n.args = {Arg::of(*self), other};
  return b.add_in_place(std::move(n)).has_value();
}

}  // namespace gbc
