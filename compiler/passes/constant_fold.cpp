#include "compiler/passes/constant_fold.h"

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "compiler/ir/kernel_prelude.h"
#include "compiler/ir/op_schema.h"
#include "compiler/passes/effects.h"
#include "compiler/passes/graph_rewrite.h"

namespace gbc {
namespace {

// One operand of an elementwise node: a number written in the model, or the (single) element of a
// constant tensor, exact in its dtype.
struct Operand {
  Scalar value;
  bool is_number = false;
};

bool truthy(const Scalar& s) {
  switch (s.kind) {
    case ScalarKind::Bool: return s.b;
    case ScalarKind::Int: return s.i != 0;
    case ScalarKind::Float: return s.f != 0.0;  // NaN is true
  }
  return false;
}

float round_to(DType dtype, float v) {
  if (dtype == DType::Float16) return gbc_round_float16(v);
  if (dtype == DType::BFloat16) return gbc_round_bfloat16(v);
  return v;
}

// c10::convert of a value to the C type T. Narrowing between integers wraps; floats reach the 8-
// and 16-bit integer types through int64 (as the kernel prelude's casts do). Nullopt where C++ is
// undefined: a non-finite or out-of-range float converted to an integer.
template <typename T>
std::optional<T> convert(const Scalar& s) {
  if constexpr (std::is_same_v<T, bool>) {
    return truthy(s);
  } else {
    switch (s.kind) {
      case ScalarKind::Bool: return static_cast<T>(s.b);
      case ScalarKind::Int: return static_cast<T>(s.i);
      case ScalarKind::Float:
        if constexpr (std::is_floating_point_v<T>) {
          return static_cast<T>(s.f);
        } else {
          if (!(s.f >= -9223372036854775808.0 && s.f < 9223372036854775808.0)) return std::nullopt;
          if constexpr (sizeof(T) >= 4) {
            if (!(s.f > static_cast<double>(std::numeric_limits<T>::min()) - 1.0 &&
                  s.f < static_cast<double>(std::numeric_limits<T>::max()) + 1.0))
              return std::nullopt;
            return static_cast<T>(s.f);
          } else {
            return static_cast<T>(static_cast<int64_t>(s.f));
          }
        }
    }
    return std::nullopt;
  }
}

// An operand converted to `common`, the dtype ATen computes the op in, held as its C compute type.
template <typename T>
std::optional<T> operand_in(const Operand& o, DType common) {
  std::optional<T> v = convert<T>(o.value);
  if (!v) return std::nullopt;
  if constexpr (std::is_floating_point_v<T>) {
    if (is_reduced_float(common)) {
      float r = round_to(common, static_cast<float>(*v));
      // LibTorch 1.13 rounds a number to the half type first, 2.x keeps it in float32: fold only
      // where both agree.
      if (o.is_number && !(r == *v || std::isnan(r))) return std::nullopt;
      return r;
    }
  } else if constexpr (!std::is_same_v<T, bool>) {
    // ATen converts numbers to integer dtypes with an overflow check (an error at run time).
    if (o.is_number && o.value.kind == ScalarKind::Int &&
        (o.value.i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
         o.value.i > static_cast<int64_t>(std::numeric_limits<T>::max())))
      return std::nullopt;
  }
  return v;
}

// The element of a tensor of dtype `out` holding the compute value v.
template <typename T>
Scalar stored(T v, DType out) {
  if (out == DType::Bool) return Scalar::from_bool(v != 0);
  if (out == DType::Float64) return Scalar::from_float(static_cast<double>(v));
  if (is_floating(out)) return Scalar::from_float(round_to(out, static_cast<float>(v)));
  return Scalar::from_int(static_cast<int64_t>(v));
}

template <typename F>
std::optional<Scalar> with_c_type(DType compute, F&& f) {
  switch (compute) {
    case DType::Bool: return f(bool{});
    case DType::UInt8: return f(uint8_t{});
    case DType::Int8: return f(int8_t{});
    case DType::Int16: return f(int16_t{});
    case DType::Int32: return f(int32_t{});
    case DType::Int64: return f(int64_t{});
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
  }
  return std::nullopt;
}

// Transcendental functions from <cmath>, in ATen's scalar formulas (computed in T, as ATen's
// kernels compute float32 in float32).
template <typename T>
std::optional<T> transcendental(const Node& n, T x) {
  const OpId op = n.op;
  if (op == OpId::Exp) return std::exp(x);
  if (op == OpId::Log) return std::log(x);
  if (op == OpId::Log1p) return std::log1p(x);
  if (op == OpId::Expm1) return std::expm1(x);
  if (op == OpId::Sqrt) return std::sqrt(x);
  if (op == OpId::Rsqrt) return T(1) / std::sqrt(x);
  if (op == OpId::Sin) return std::sin(x);
  if (op == OpId::Cos) return std::cos(x);
  if (op == OpId::Tanh) return std::tanh(x);
  if (op == OpId::Erf) return std::erf(x);
  if (op == OpId::Sigmoid) return T(1) / (T(1) + std::exp(-x));
  if (op == OpId::Silu) return x / (T(1) + std::exp(-x));
  if (op == OpId::Gelu) {
    if (n.attr_string("approximate", "none") == "tanh") {
      const T beta = static_cast<T>(M_SQRT2 * M_2_SQRTPI * 0.5);
      const T kappa = static_cast<T>(0.044715);
      return T(0.5) * x * (T(1) + std::tanh(beta * (x + kappa * (x * x * x))));
    }
    return x * T(0.5) * (T(1) + std::erf(x * static_cast<T>(M_SQRT1_2)));
  }
  return std::nullopt;
}

// Unary ops; the exact ones (negation, rounding, ...) through the kernel prelude.
template <typename T>
std::optional<T> unary(const Node& n, T x) {
  const OpId op = n.op;
  if constexpr (std::is_same_v<T, bool>) {
    return std::nullopt;
  } else {
    if (op == OpId::Neg) return gbc_neg(x);
    if (op == OpId::Abs) return gbc_abs(x);
    if (op == OpId::Relu) return gbc_relu(x);
    if (op == OpId::Floor) return gbc_floor(x);
    if (op == OpId::Ceil) return gbc_ceil(x);
    if (op == OpId::Round) return gbc_round(x);
    if constexpr (std::is_floating_point_v<T>) {
      if (op == OpId::Reciprocal) return gbc_reciprocal(x);
      if (op == OpId::Hardswish) return gbc_hardswish(x);
      if (op == OpId::Hardsigmoid) return gbc_hardsigmoid(x);
      // sign(NaN) is 0 in LibTorch 1.13 and NaN in later versions.
      if (op == OpId::Sign) return std::isnan(x) ? std::nullopt : std::optional<T>(gbc_sign(x));
      return transcendental(n, x);
    } else {
      if (op == OpId::Sign) return gbc_sign(x);
      return std::nullopt;
    }
  }
}

template <typename T>
std::optional<T> binary(OpId op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    if (op == OpId::Add || op == OpId::Maximum) return a || b;
    if (op == OpId::Mul || op == OpId::Minimum) return a && b;
    return std::nullopt;
  } else {
    if (op == OpId::Add) return gbc_add(a, b);
    if (op == OpId::Sub) return gbc_sub(a, b);
    if (op == OpId::Mul) return gbc_mul(a, b);
    if (op == OpId::Maximum) return gbc_maximum(a, b);
    if (op == OpId::Minimum) return gbc_minimum(a, b);
    if constexpr (std::is_floating_point_v<T>) {
      if (op == OpId::Div) return gbc_div(a, b);
      if (op == OpId::Pow) return gbc_pow(a, b);
      if (op == OpId::Remainder) return gbc_remainder(a, b);
    } else {
      // ATen raises for negative integer powers and integer remainder by zero.
      if constexpr (std::is_signed_v<T>) {
        if (op == OpId::Pow && b < 0) return std::nullopt;
      }
      if (op == OpId::Pow) return gbc_pow(a, b);
      if (op == OpId::Remainder && b != 0) return gbc_remainder(a, b);
    }
    return std::nullopt;
  }
}

template <typename T>
bool compare(OpId op, T a, T b) {
  if (op == OpId::Eq) return a == b;
  if (op == OpId::Ne) return a != b;
  if (op == OpId::Lt) return a < b;
  if (op == OpId::Le) return a <= b;
  if (op == OpId::Gt) return a > b;
  return a >= b;
}

// ATen's value of an elementwise node on constant operands (nullopt: not folded).
std::optional<Scalar> evaluate(const Graph& g, const Node& n, const std::vector<Operand>& ops) {
  DType out = g.type(n.output()).dtype;
  const OpSchema* schema = find_op_schema(n.op);
  const OpId op = n.op;
  switch (schema->cls) {
    case OpClass::Unary:
      if (op == OpId::LogicalNot) return Scalar::from_bool(!truthy(ops[0].value));
      return with_c_type(compute_dtype(out), [&](auto t) -> std::optional<Scalar> {
        using T = decltype(t);
        auto x = operand_in<T>(ops[0], out);
        if (!x) return std::nullopt;
        auto r = unary<T>(n, *x);
        if (!r) return std::nullopt;
        return stored(*r, out);
      });
    case OpClass::Binary: {
      if (op == OpId::LogicalAnd) return Scalar::from_bool(truthy(ops[0].value) && truthy(ops[1].value));
      if (op == OpId::LogicalOr) return Scalar::from_bool(truthy(ops[0].value) || truthy(ops[1].value));
      bool is_compare = op == OpId::Eq || op == OpId::Ne || op == OpId::Lt || op == OpId::Le || op == OpId::Gt || op == OpId::Ge;
      DType common = is_compare ? result_type({promotion_operand(g, n.args[0]), promotion_operand(g, n.args[1])}) : out;
      return with_c_type(compute_dtype(common), [&](auto t) -> std::optional<Scalar> {
        using T = decltype(t);
        auto a = operand_in<T>(ops[0], common);
        auto b = operand_in<T>(ops[1], common);
        if (!a || !b) return std::nullopt;
        if (is_compare) return Scalar::from_bool(compare(op, *a, *b));
        auto r = binary<T>(op, *a, *b);
        if (!r) return std::nullopt;
        return stored(*r, out);
      });
    }
    case OpClass::Where:
      return with_c_type(compute_dtype(out), [&](auto t) -> std::optional<Scalar> {
        using T = decltype(t);
        auto r = operand_in<T>(truthy(ops[0].value) ? ops[1] : ops[2], out);
        if (!r) return std::nullopt;
        return stored(*r, out);
      });
    case OpClass::Clamp:
      return with_c_type(compute_dtype(out), [&](auto t) -> std::optional<Scalar> {
        using T = decltype(t);
        auto x = operand_in<T>(ops[0], out);
        if (!x) return std::nullopt;
        // ATen clamps to min first, then to max (min > max gives max).
        T r = *x;
        for (bool is_min : {true, false}) {
          auto s = n.attr_scalar(is_min ? "min" : "max");
          if (!s) continue;
          if (s->kind == ScalarKind::Float && std::isnan(s->f)) return std::nullopt;  // ATen's kernels disagree
          auto b = operand_in<T>(Operand{*s, true}, out);
          if (!b) return std::nullopt;
          r = is_min ? gbc_clamp_min(r, *b) : gbc_clamp_max(r, *b);
        }
        return stored(r, out);
      });
    case OpClass::Cast:
      return with_c_type(compute_dtype(out), [&](auto t) -> std::optional<Scalar> {
        using T = decltype(t);
        auto r = convert<T>(ops[0].value);
        if (!r) return std::nullopt;
        return stored(*r, out);
      });
    default: return std::nullopt;
  }
}

// The element value at::full(shape, value, dtype) stores; nullopt where ATen's conversion raises.
std::optional<Scalar> full_element(const Scalar& value, DType dtype) {
  if (dtype == DType::Float16 || dtype == DType::BFloat16) {
    double v = value.to_double();
    double limit = dtype == DType::Float16 ? 65504.0 : 3.3895313892515355e38;
    if (std::isfinite(v) && std::fabs(v) > limit) return std::nullopt;  // c10's checked conversion
  }
  if (is_integral(dtype) && value.kind == ScalarKind::Int) {
    bool fits = with_c_type(dtype, [&](auto t) -> std::optional<Scalar> {
                  using T = decltype(t);
                  if (value.i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
                      value.i > static_cast<int64_t>(std::numeric_limits<T>::max()))
                    return std::nullopt;
                  return value;
                }).has_value();
    if (!fits) return std::nullopt;
  }
  return with_c_type(compute_dtype(dtype), [&](auto t) -> std::optional<Scalar> {
    using T = decltype(t);
    auto v = convert<T>(value);
    if (!v) return std::nullopt;
    return stored(*v, dtype);
  });
}

class Folder {
 public:
  explicit Folder(Graph& graph) : g_(graph), aa_(graph), returned_(aa_) {}

  void run() {
    visit(g_.body);
    substitute_uses(g_, subst_);
  }

 private:
  void visit(Block& block) {
    std::vector<Node> out;
    out.reserve(block.nodes.size());
    for (auto& n : block.nodes) {
      for (auto& a : n.args)
        if (a.is_value()) a.value = resolve(a.value);
      for (auto& b : n.blocks) visit(b);
      if (n.op == OpId::Full) {
        record_full(n);
      } else if (std::optional<Node> folded = fold(n)) {
        n = std::move(*folded);
        record_full(n);
      } else if (simplify(n, out)) {
        continue;
      }
      out.push_back(std::move(n));
    }
    block.nodes = std::move(out);
  }

  ValueId resolve(ValueId v) const {
    for (auto it = subst_.find(v); it != subst_.end(); it = subst_.find(v)) v = it->second;
    return v;
  }

  void record_full(const Node& n) {
    ValueId v = n.output();
    if (aa_.may_be_mutated(v)) return;
    auto value = n.attr_scalar("value");
    if (auto element = full_element(*value, g_.type(v).dtype)) constants_[v] = *element;
  }

  std::optional<Operand> operand(const Arg& a) const {
    if (!a.is_value()) return Operand{a.scalar, true};
    auto it = constants_.find(a.value);
    if (it == constants_.end()) return std::nullopt;
    return Operand{it->second, false};
  }

  std::optional<Node> fold(const Node& n) {
    if (!is_elementwise_op(n.op) || n.outputs.size() != 1 || aa_.may_be_mutated(n.output())) return std::nullopt;
    std::vector<Operand> ops;
    for (const auto& a : n.args) {
      auto o = operand(a);
      if (!o) return std::nullopt;
      ops.push_back(*o);
    }
    std::optional<Scalar> value = evaluate(g_, n, ops);
    if (!value) return std::nullopt;
    const ValueType& t = g_.type(n.output());
    Attrs attrs = {{"shape", t.shape}, {"value", *value}, {"dtype", t.dtype}};
    return make_node_into(g_, n.output(), OpId::Full, {}, std::move(attrs), n.loc);
  }

  // Whether `c` leaves the other operand of n unchanged in n's compute dtype; c_is_rhs: it is
  // the second operand.
  bool is_identity(OpId op, const Operand& c, bool c_is_rhs, DType compute) const {
    double v = c.value.to_double();
    bool exact = !is_floating(compute);  // integer and bool arithmetic has no signed zero
    bool negative_zero = c.value.kind == ScalarKind::Float && std::signbit(c.value.f);
    if (op == OpId::Mul) return v == 1.0;
    if (op == OpId::Div) return c_is_rhs && v == 1.0;
    if (op == OpId::Add) return v == 0.0 && (exact || negative_zero);
    if (op == OpId::Sub) return c_is_rhs && v == 0.0 && (exact || !negative_zero);
    return false;
  }

  // x op identity: the node goes away (its uses read x), or becomes a cast where ATen's
  // promotion widens x.
  bool simplify(const Node& n, std::vector<Node>& out) {
    const OpId op = n.op;
    // A cast to the dtype x has is x itself in ATen (`to` returns self), writes through it
    // included: its uses read x (seed 8100868: add_ of a slice of it had to change the input).
    if (op == OpId::To && n.args.size() == 1 && n.args[0].is_value() && g_.type(n.args[0].value).is_tensor() &&
        g_.type(n.args[0].value).dtype == g_.type(n.output()).dtype) {
      subst_[n.output()] = n.args[0].value;
      returned_.substitute(n.output(), n.args[0].value);
      return true;
    }
    if (!(op == OpId::Add || op == OpId::Sub || op == OpId::Mul || op == OpId::Div) || n.args.size() != 2) return false;
    ValueId result = n.output();
    const ValueType& rt = g_.type(result);
    for (size_t c = 0; c < 2; ++c) {
      const Arg& x = n.args[1 - c];
      if (!x.is_value() || !g_.type(x.value).is_tensor()) continue;
      auto identity = operand(n.args[c]);
      if (!identity || !is_identity(op, *identity, c == 1, rt.dtype)) continue;
      const ValueType& xt = g_.type(x.value);
      if (!same_type(g_, ValueType::tensor(rt.dtype, xt.shape), rt)) continue;
      // Sharing x's storage is unobservable only if nobody writes to either: no node of this
      // graph, and no code outside it, which holds the graph's inputs and outputs (a graph break
      // runs `mul_(x, 0)` after this graph returned `div(x, 1)`: found by the fuzzer, seed 7400401).
      if (aa_.may_be_mutated(x.value) || aa_.may_be_mutated(result)) continue;
      const bool shares = xt.dtype == rt.dtype;  // else a cast: a new tensor
      if (shares && returned_.returned(result) && (aa_.may_alias_graph_input(x.value) || returned_.returned(x.value)))
        continue;
      if (shares) {
        subst_[result] = x.value;
        returned_.substitute(result, x.value);
      } else {
        out.push_back(make_node_into(g_, result, OpId::To, {x}, {{"dtype", rt.dtype}}, n.loc));
      }
      return true;
    }
    return false;
  }

  Graph& g_;
  AliasAnalysis aa_;
  ReturnedStorage returned_;
  std::map<ValueId, Scalar> constants_;
  std::map<ValueId, ValueId> subst_;
};

}  // namespace

Graph constant_fold(const Graph& graph) {
  Graph g = graph;
  Folder(g).run();
  return g;
}

}  // namespace gbc
