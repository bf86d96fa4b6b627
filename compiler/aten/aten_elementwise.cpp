// Elementwise ops on ATen: unary, binary, where, clamp, cast and the in-place add_/mul_/copy_.
//
// Numbers in args must promote as Python numbers do (float32 tensor + 2.5 stays float32). Where
// ATen has a Tensor-Scalar overload, that overload is what PyTorch runs for `x + 2.5`, so it is
// used (it matters for pow, whose Scalar kernel special-cases exponents like 2 and 0.5). Elsewhere
// the number becomes a wrapped-number 0-d tensor, which is exactly what those overloads build
// internally.
#include <ATen/ops/abs.h>
#include <ATen/ops/add.h>
#include <ATen/ops/ceil.h>
#include <ATen/ops/clamp.h>
#include <ATen/ops/cos.h>
#include <ATen/ops/div.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/erf.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/expm1.h>
#include <ATen/ops/floor.h>
#include <ATen/ops/ge.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/gt.h>
#include <ATen/ops/hardsigmoid.h>
#include <ATen/ops/hardswish.h>
#include <ATen/ops/le.h>
#include <ATen/ops/log.h>
#include <ATen/ops/log1p.h>
#include <ATen/ops/logical_and.h>
#include <ATen/ops/logical_not.h>
#include <ATen/ops/logical_or.h>
#include <ATen/ops/lt.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/mul.h>
#include <ATen/ops/ne.h>
#include <ATen/ops/neg.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/reciprocal.h>
#include <ATen/ops/relu.h>
#include <ATen/ops/remainder.h>
#include <ATen/ops/round.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/sigmoid.h>
#include <ATen/ops/sign.h>
#include <ATen/ops/silu.h>
#include <ATen/ops/sin.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/sub.h>
#include <ATen/ops/tanh.h>
#include <ATen/ops/where.h>

#include <map>

#include "compiler/aten/aten_convert.h"
#include "compiler/aten/aten_ops_internal.h"
#include "compiler/ir/op_schema.h"

namespace gbc::aten_detail {
namespace {

using UnaryFn = at::Tensor (*)(const at::Tensor&);
using BinaryFn = at::Tensor (*)(const at::Tensor&, const at::Tensor&);
using TensorScalarFn = at::Tensor (*)(const at::Tensor&, const c10::Scalar&);

const std::map<OpId, UnaryFn>& unary_table() {
  static const std::map<OpId, UnaryFn> table = {
      {OpId::Neg, [](const at::Tensor& x) { return at::neg(x); }},
      {OpId::Abs, [](const at::Tensor& x) { return at::abs(x); }},
      {OpId::Exp, [](const at::Tensor& x) { return at::exp(x); }},
      {OpId::Log, [](const at::Tensor& x) { return at::log(x); }},
      {OpId::Log1p, [](const at::Tensor& x) { return at::log1p(x); }},
      {OpId::Expm1, [](const at::Tensor& x) { return at::expm1(x); }},
      {OpId::Sqrt, [](const at::Tensor& x) { return at::sqrt(x); }},
      {OpId::Rsqrt, [](const at::Tensor& x) { return at::rsqrt(x); }},
      {OpId::Sin, [](const at::Tensor& x) { return at::sin(x); }},
      {OpId::Cos, [](const at::Tensor& x) { return at::cos(x); }},
      {OpId::Tanh, [](const at::Tensor& x) { return at::tanh(x); }},
      {OpId::Sigmoid, [](const at::Tensor& x) { return at::sigmoid(x); }},
      {OpId::Relu, [](const at::Tensor& x) { return at::relu(x); }},
      {OpId::Silu, [](const at::Tensor& x) { return at::silu(x); }},
      {OpId::Hardswish, [](const at::Tensor& x) { return at::hardswish(x); }},
      {OpId::Hardsigmoid, [](const at::Tensor& x) { return at::hardsigmoid(x); }},
      {OpId::Erf, [](const at::Tensor& x) { return at::erf(x); }},
      {OpId::Reciprocal, [](const at::Tensor& x) { return at::reciprocal(x); }},
      {OpId::Floor, [](const at::Tensor& x) { return at::floor(x); }},
      {OpId::Ceil, [](const at::Tensor& x) { return at::ceil(x); }},
      {OpId::Round, [](const at::Tensor& x) { return at::round(x); }},
      {OpId::Sign, [](const at::Tensor& x) { return at::sign(x); }},
      {OpId::LogicalNot, [](const at::Tensor& x) { return at::logical_not(x); }},
  };
  return table;
}

const std::map<OpId, BinaryFn>& binary_table() {
  static const std::map<OpId, BinaryFn> table = {
      {OpId::Add, [](const at::Tensor& a, const at::Tensor& b) { return at::add(a, b); }},
      {OpId::Sub, [](const at::Tensor& a, const at::Tensor& b) { return at::sub(a, b); }},
      {OpId::Mul, [](const at::Tensor& a, const at::Tensor& b) { return at::mul(a, b); }},
      {OpId::Div, [](const at::Tensor& a, const at::Tensor& b) { return at::div(a, b); }},
      {OpId::Pow, [](const at::Tensor& a, const at::Tensor& b) { return at::pow(a, b); }},
      {OpId::Maximum, [](const at::Tensor& a, const at::Tensor& b) { return at::maximum(a, b); }},
      {OpId::Minimum, [](const at::Tensor& a, const at::Tensor& b) { return at::minimum(a, b); }},
      {OpId::Remainder, [](const at::Tensor& a, const at::Tensor& b) { return at::remainder(a, b); }},
      {OpId::Eq, [](const at::Tensor& a, const at::Tensor& b) { return at::eq(a, b); }},
      {OpId::Ne, [](const at::Tensor& a, const at::Tensor& b) { return at::ne(a, b); }},
      {OpId::Lt, [](const at::Tensor& a, const at::Tensor& b) { return at::lt(a, b); }},
      {OpId::Le, [](const at::Tensor& a, const at::Tensor& b) { return at::le(a, b); }},
      {OpId::Gt, [](const at::Tensor& a, const at::Tensor& b) { return at::gt(a, b); }},
      {OpId::Ge, [](const at::Tensor& a, const at::Tensor& b) { return at::ge(a, b); }},
      {OpId::LogicalAnd, [](const at::Tensor& a, const at::Tensor& b) { return at::logical_and(a, b); }},
      {OpId::LogicalOr, [](const at::Tensor& a, const at::Tensor& b) { return at::logical_or(a, b); }},
  };
  return table;
}

// The ops that PyTorch runs through a Tensor-Scalar overload for `tensor op number`.
const std::map<OpId, TensorScalarFn>& tensor_scalar_table() {
  static const std::map<OpId, TensorScalarFn> table = {
      {OpId::Add, [](const at::Tensor& a, const c10::Scalar& b) { return at::add(a, b); }},
      {OpId::Sub, [](const at::Tensor& a, const c10::Scalar& b) { return at::sub(a, b); }},
      {OpId::Mul, [](const at::Tensor& a, const c10::Scalar& b) { return at::mul(a, b); }},
      {OpId::Div, [](const at::Tensor& a, const c10::Scalar& b) { return at::div(a, b); }},
      {OpId::Pow, [](const at::Tensor& a, const c10::Scalar& b) { return at::pow(a, b); }},
      {OpId::Remainder, [](const at::Tensor& a, const c10::Scalar& b) { return at::remainder(a, b); }},
      {OpId::Eq, [](const at::Tensor& a, const c10::Scalar& b) { return at::eq(a, b); }},
      {OpId::Ne, [](const at::Tensor& a, const c10::Scalar& b) { return at::ne(a, b); }},
      {OpId::Lt, [](const at::Tensor& a, const c10::Scalar& b) { return at::lt(a, b); }},
      {OpId::Le, [](const at::Tensor& a, const c10::Scalar& b) { return at::le(a, b); }},
      {OpId::Gt, [](const at::Tensor& a, const c10::Scalar& b) { return at::gt(a, b); }},
      {OpId::Ge, [](const at::Tensor& a, const c10::Scalar& b) { return at::ge(a, b); }},
  };
  return table;
}

at::Tensor unary(const OpCall& c) {
  const at::Tensor& x = c.tensor(0);
  if (c.op() == OpId::Gelu) return at::gelu(x, c.node.attr_string("approximate", "none"));
  auto it = unary_table().find(c.op());
  if (it == unary_table().end()) internal_error("aten: no unary op '" + op_name(c.op()) + "'");
  return it->second(x);
}

at::Tensor binary(const OpCall& c) {
  const OpId op = c.op();
  bool n0 = c.is_number(0), n1 = c.is_number(1);
  if (n0 && n1) c.fail("needs at least one tensor operand, got two numbers");
  if (n1) {
    auto it = tensor_scalar_table().find(op);
    if (it != tensor_scalar_table().end()) return it->second(c.tensor(0), c.number(1));
  }
  // `2 ** x` is pow's Scalar-Tensor overload in PyTorch, and `2 % x` remainder's.
  if (n0 && op == OpId::Pow) return at::pow(c.number(0), c.tensor(1));
  if (n0 && op == OpId::Remainder) return at::remainder(c.number(0), c.tensor(1));
  auto it = binary_table().find(op);
  if (it == binary_table().end()) internal_error("aten: no binary op '" + op_name(op) + "'");
  return it->second(c.tensor_or_wrapped(0), c.tensor_or_wrapped(1));
}

at::Tensor where(const OpCall& c) {
  const at::Tensor& cond = c.tensor(0);
  bool n1 = c.is_number(1), n2 = c.is_number(2);
  // torch.where(c, x, 2.5) is where's Scalar overload; it promotes the number as a wrapped number.
  if (n1 && n2) return at::where(cond, c.number(1), c.number(2));
  if (n1) return at::where(cond, c.number(1), c.tensor(2));
  if (n2) return at::where(cond, c.tensor(1), c.number(2));
  return at::where(cond, c.tensor(1), c.tensor(2));
}

at::Tensor clamp(const OpCall& c) {
  c10::optional<c10::Scalar> lo, hi;
  if (auto s = c.node.attr_scalar("min")) lo = to_aten(*s);
  if (auto s = c.node.attr_scalar("max")) hi = to_aten(*s);
  if (!lo && !hi) c.fail("needs min or max (or both)");
  return at::clamp(c.tensor(0), lo, hi);
}

at::Tensor in_place(const OpCall& c) {
  // The caller's tensor itself is updated (Tensor::add_ on the same TensorImpl), so graph
  // inputs and every alias of self see the change, as in PyTorch.
  at::Tensor self = c.tensor(0);
  if (c.op() == OpId::CopyInPlace) return self.copy_(c.tensor(1));
  bool mul = c.op() == OpId::MulInPlace;
  if (c.is_number(1)) {
    c10::Scalar other = c.number(1);
    return mul ? self.mul_(other) : self.add_(other);
  }
  const at::Tensor& other = c.tensor(1);
  return mul ? self.mul_(other) : self.add_(other);
}

}  // namespace

at::Tensor run_elementwise(const OpCall& call) {
  const OpSchema* schema = find_op_schema(call.op());
  switch (schema->cls) {
    case OpClass::Unary: return unary(call);
    case OpClass::Binary: return binary(call);
    case OpClass::Where: return where(call);
    case OpClass::Clamp: return clamp(call);
    case OpClass::Cast: {
      auto dtype = call.node.attr_dtype("dtype");
      if (!dtype) call.fail("needs a dtype");
      return call.tensor(0).to(to_aten(*dtype));
    }
    case OpClass::InPlace: return in_place(call);
    default: break;
  }
  internal_error("aten: '" + op_name(call.op()) + "' is not an elementwise op");
}

}  // namespace gbc::aten_detail
