#include "harness/fuzz/value_range.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "compiler/ir/custom_ops.h"
#include "compiler/ir/op_schema.h"

namespace gbc {
namespace {

ValueRange corners(std::initializer_list<double> values) {
  return {std::min(values), std::max(values)};
}

ValueRange add(const ValueRange& a, const ValueRange& b) { return {a.lo + b.lo, a.hi + b.hi}; }
ValueRange neg(const ValueRange& a) { return {-a.hi, -a.lo}; }
ValueRange mul(const ValueRange& a, const ValueRange& b) {
  return corners({a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi});
}
ValueRange abs_range(const ValueRange& a) {
  if (a.lo >= 0) return a;
  if (a.hi <= 0) return neg(a);
  return {0.0, std::max(-a.lo, a.hi)};
}
// f increasing on the range.
template <typename F>
ValueRange increasing(const ValueRange& a, F f) {
  return {f(a.lo), f(a.hi)};
}
// Sums of n values from `a`, for n in [nmin, nmax] (an empty sum is 0).
ValueRange sum_of(const ValueRange& a, int64_t nmin, int64_t nmax) {
  auto lo = static_cast<double>(nmin), hi = static_cast<double>(nmax);
  return corners({lo * a.lo, hi * a.lo, lo * a.hi, hi * a.hi});
}
// Dot products of length up to k, zero padding included (conv2d): always contains 0.
ValueRange dot_of(const ValueRange& a, const ValueRange& b, int64_t k) {
  ValueRange m = mul(a, b);
  auto n = static_cast<double>(k);
  return {std::min(0.0, n * m.lo), std::max(0.0, n * m.hi)};
}

std::optional<ValueRange> reciprocal_of(const ValueRange& a) {
  if (a.lo > 0 || a.hi < 0) return ValueRange{1.0 / a.hi, 1.0 / a.lo};
  return std::nullopt;
}

std::optional<ValueRange> unary(OpId op, const ValueRange& x, const Node& node) {
  if (op == OpId::Neg) return neg(x);
  if (op == OpId::Abs) return abs_range(x);
  if (op == OpId::Exp) return increasing(x, [](double v) { return std::exp(v); });
  if (op == OpId::Expm1) return increasing(x, [](double v) { return std::expm1(v); });
  if (op == OpId::Log) {
    if (x.lo <= 0) return std::nullopt;
    return increasing(x, [](double v) { return std::log(v); });
  }
  if (op == OpId::Log1p) {
    if (x.lo <= -1) return std::nullopt;
    return increasing(x, [](double v) { return std::log1p(v); });
  }
  if (op == OpId::Sqrt) {
    if (x.lo < 0) return std::nullopt;
    return increasing(x, [](double v) { return std::sqrt(v); });
  }
  if (op == OpId::Rsqrt) {
    if (x.lo <= 0) return std::nullopt;
    return ValueRange{1.0 / std::sqrt(x.hi), 1.0 / std::sqrt(x.lo)};
  }
  if (op == OpId::Reciprocal) return reciprocal_of(x);
  if (op == OpId::Sin || op == OpId::Cos) return ValueRange{-1.0, 1.0};
  if (op == OpId::Tanh) return increasing(x, [](double v) { return std::tanh(v); });
  if (op == OpId::Erf) return increasing(x, [](double v) { return std::erf(v); });
  if (op == OpId::Sigmoid) return increasing(x, [](double v) { return 1.0 / (1.0 + std::exp(-v)); });
  if (op == OpId::Relu) return increasing(x, [](double v) { return std::max(v, 0.0); });
  // gelu(x) >= -0.17 and silu(x) >= -0.279 everywhere; both lie below max(x, 0).
  if (op == OpId::Gelu) return ValueRange{std::min(0.0, std::max(x.lo, -0.18)), std::max(x.hi, 0.0)};
  if (op == OpId::Silu) return ValueRange{std::min(0.0, std::max(x.lo, -0.28)), std::max(x.hi, 0.0)};
  if (op == OpId::Hardsigmoid) return increasing(x, [](double v) { return std::min(std::max(v + 3.0, 0.0), 6.0) / 6.0; });
  // hardswish(x) >= -0.375 everywhere (at x = -1.5), and lies below max(x, 0).
  if (op == OpId::Hardswish) return ValueRange{std::min(0.0, std::max(x.lo, -0.375)), std::max(x.hi, 0.0)};
  if (op == OpId::Floor) return increasing(x, [](double v) { return std::floor(v); });
  if (op == OpId::Ceil) return increasing(x, [](double v) { return std::ceil(v); });
  if (op == OpId::Round) return increasing(x, [](double v) { return std::nearbyint(v); });  // half to even, as ATen
  if (op == OpId::Sign) return increasing(x, [](double v) { return v > 0 ? 1.0 : v < 0 ? -1.0 : 0.0; });
  if (op == OpId::LogicalNot) return ValueRange{0.0, 1.0};
  internal_error("value_range: unary op '" + op_name(node.op) + "' has no rule");
}

bool is_integer_value(double v) { return std::isfinite(v) && v == std::floor(v); }

// x ** e for a number e.
std::optional<ValueRange> pow_number_exponent(const ValueRange& x, double e, bool integral_result) {
  if (e == 0) return ValueRange::point(1.0);
  auto p = [e](double v) { return std::pow(v, e); };
  if (is_integer_value(e)) {
    if (e < 0) {
      if (integral_result) return std::nullopt;  // ATen: "Integers to negative integer powers are not allowed"
      if (x.lo <= 0 && x.hi >= 0) return std::nullopt;  // 0 ** -n is Inf
      return corners({p(x.lo), p(x.hi)});
    }
    bool even = std::fmod(e, 2.0) == 0;
    if (even && x.contains(0)) return ValueRange{0.0, std::max(p(x.lo), p(x.hi))};
    return corners({p(x.lo), p(x.hi)});
  }
  // A fractional power of a negative number is NaN; of 0 with e < 0, Inf.
  if (x.lo < 0 || (e < 0 && x.lo <= 0)) return std::nullopt;
  return corners({p(x.lo), p(x.hi)});
}

std::optional<ValueRange> pow_range(const Node& node, const ValueRange& base, const ValueRange& exponent,
                                    bool integral_result) {
  const Arg& e = node.args[1];
  if (!e.is_value()) return pow_number_exponent(base, std::isfinite(e.scalar.to_double()) ? e.scalar.to_double() : 0.0,
                                                integral_result);
  if (integral_result) {
    // Integer tensors: keep exponents natural and results small.
    if (exponent.lo < 0) return std::nullopt;
    double m = std::pow(std::max({std::abs(base.lo), std::abs(base.hi), 1.0}), exponent.hi);
    return base.lo >= 0 ? ValueRange{0.0, m} : ValueRange{-m, m};
  }
  // A positive base makes x ** y monotone in each argument, so the corners bound it.
  if (base.lo <= 0) return std::nullopt;
  auto p = [](double x, double y) { return std::pow(x, y); };
  return corners({p(base.lo, exponent.lo), p(base.lo, exponent.hi), p(base.hi, exponent.lo), p(base.hi, exponent.hi)});
}

std::optional<ValueRange> binary(const Node& node, const ValueRange& a, const ValueRange& b, DType out) {
  const OpId op = node.op;
  if (op == OpId::Add || op == OpId::AddInPlace) return add(a, b);
  if (op == OpId::Sub) return add(a, neg(b));
  if (op == OpId::Mul || op == OpId::MulInPlace) return mul(a, b);
  if (op == OpId::CopyInPlace) return b;
  if (op == OpId::Div) {
    auto r = reciprocal_of(b);
    if (!r) return std::nullopt;
    return mul(a, *r);
  }
  if (op == OpId::Pow) return pow_range(node, a, b, !is_floating(out));
  if (op == OpId::Maximum) return ValueRange{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
  if (op == OpId::Minimum) return ValueRange{std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
  if (op == OpId::Remainder) {
    // Python's modulo takes the divisor's sign; a divisor range holding 0 can divide by zero.
    if (b.lo > 0) return ValueRange{0.0, b.hi};
    if (b.hi < 0) return ValueRange{b.lo, 0.0};
    return std::nullopt;
  }
  return ValueRange{0.0, 1.0};  // comparisons and logical ops
}

struct ReducedCount {
  int64_t min = 1;
  int64_t max = 1;
};

// How many elements each output element of a reduction over `dims` (all when absent) combines.
ReducedCount reduced_count(const Graph& g, const SymShape& shape, const std::optional<std::vector<int64_t>>& dims) {
  DimExpr n = 1;
  auto rank = static_cast<int64_t>(shape.size());
  if (!dims || dims->empty()) {
    n = numel(shape);
  } else {
    for (int64_t d : *dims) {
      if (rank == 0) continue;
      n = n * shape[static_cast<size_t>(d < 0 ? d + rank : d)];
    }
  }
  return {g.dims.min_of(n), g.dims.max_of(n)};
}

std::optional<ValueRange> reduction(const Graph& g, const Node& node, const ValueRange& x) {
  const SymShape& shape = g.type(node.args[0].value).shape;
  ReducedCount n = reduced_count(g, shape, node.attr_int_list("dim"));
  const OpId op = node.op;
  if (op == OpId::Sum) return sum_of(x, n.min, n.max);
  if (op == OpId::Prod) {
    double m = std::pow(std::max({std::abs(x.lo), std::abs(x.hi), 1.0}), static_cast<double>(n.max));
    return x.lo >= 0 ? ValueRange{0.0, m} : ValueRange{-m, m};
  }
  if (n.min < 1) return std::nullopt;  // mean and var give NaN, argmax raises, amax has no identity
  if (op == OpId::Mean || op == OpId::Amax || op == OpId::Amin) return x;
  if (op == OpId::Argmax) return ValueRange{0.0, static_cast<double>(n.max - 1)};
  if (op == OpId::Logsumexp) return ValueRange{x.lo, x.hi + std::log(static_cast<double>(n.max))};
  if (op == OpId::Var) {
    int64_t correction = node.attr_int("correction", 1);
    if (n.min - correction < 1) return std::nullopt;  // divides by n - correction <= 0
    double spread = x.hi - x.lo;
    return ValueRange{0.0, spread * spread * static_cast<double>(n.max) / static_cast<double>(n.min - correction)};
  }
  internal_error("value_range: reduction '" + op_name(op) + "' has no rule");
}

std::optional<ValueRange> normalization(const Graph& g, const Node& node, const std::vector<ValueRange>& a) {
  const SymShape& shape = g.type(node.args[0].value).shape;
  if (node.op == OpId::Softmax) return ValueRange{0.0, 1.0};
  if (node.op == OpId::LogSoftmax) {
    int64_t dim = node.attr_int("dim", -1);
    ReducedCount n = reduced_count(g, shape, std::vector<int64_t>{dim});
    return ValueRange{a[0].lo - a[0].hi - std::log(static_cast<double>(std::max<int64_t>(n.max, 1))), 0.0};
  }
  // A normalized value lies within sqrt(n) of 0, n being the elements sharing the statistics.
  auto normalized = [](int64_t nmax) {
    double s = std::sqrt(static_cast<double>(std::max<int64_t>(nmax, 1)));
    return ValueRange{-s, s};
  };
  if (node.op == OpId::LayerNorm) {
    DimExpr n = numel(*node.attr_shape("normalized_shape"));
    ValueRange r = normalized(g.dims.max_of(n));
    if (a.size() > 1) r = mul(r, a[1]);
    if (a.size() > 2) r = add(r, a[2]);
    return r;
  }
  // batch_norm(input, weight, bias, running_mean, running_var)
  ValueRange r;
  if (node.attr_bool("training", false)) {
    DimExpr per_channel = 1;
    for (size_t i = 0; i < shape.size(); ++i)
      if (i != 1) per_channel = per_channel * shape[i];
    // ATen: "Expected more than 1 value per channel when training".
    if (g.dims.min_of(per_channel) < 2) return std::nullopt;
    r = normalized(g.dims.max_of(per_channel));
  } else {
    double eps = node.attr_float("eps", 1e-5);
    if (a[4].lo + eps <= 0) return std::nullopt;
    r = mul(add(a[0], neg(a[3])), ValueRange{1.0 / std::sqrt(a[4].hi + eps), 1.0 / std::sqrt(a[4].lo + eps)});
  }
  return add(mul(r, a[1]), a[2]);
}

std::optional<ValueRange> external(const Graph& g, const Node& node, const std::vector<ValueRange>& a) {
  // A pool's window always holds an input element (padding is at most half the kernel): a max
  // stays in the input's range, an average too, or between it and the zeros of the padding.
  if (node.op == OpId::MaxPool2d) return a[0];
  if (node.op == OpId::AdaptiveAvgPool2d || node.op == OpId::Embedding) return a[0];  // averages, or rows, of the input
  if (node.op == OpId::Addmm || node.op == OpId::Baddbmm) {  // beta * self + alpha * (mat1 @ mat2)
    const SymShape& s1 = g.type(node.args[1].value).shape;
    auto factor = [&](const char* name) { return node.attr_scalar(name).value_or(Scalar::from_int(1)).to_double(); };
    const ValueRange product = dot_of(a[1], a[2], g.dims.max_of(s1.back()));
    return add(mul(a[0], ValueRange{factor("beta"), factor("beta")}), mul(product, ValueRange{factor("alpha"), factor("alpha")}));
  }
  if (node.op == OpId::AvgPool2d) {
    if (node.has_attr("divisor_override")) return std::nullopt;
    const bool pads = node.attr_bool("count_include_pad", true) && node.attr_int_list("padding").value_or(std::vector<int64_t>{0}) != std::vector<int64_t>{0};
    return pads ? ValueRange{std::min(a[0].lo, 0.0), std::max(a[0].hi, 0.0)} : a[0];
  }
  const SymShape& s0 = g.type(node.args[0].value).shape;
  const SymShape& s1 = g.type(node.args[1].value).shape;
  DimExpr k = 1;
  if (node.op == OpId::Conv2d) k = s1[1] * s1[2] * s1[3];
  else if (!s0.empty()) k = s0.back();
  ValueRange r = dot_of(a[0], a[1], g.dims.max_of(k));
  if (a.size() > 2) r = add(r, a[2]);
  return r;
}

std::optional<ValueRange> custom(const Node& node, const std::vector<ValueRange>& a) {
  std::string name = node.attr_string("name", "");
  if (name == "scaled_tanh") return increasing(a[0], [](double v) { return 2.0 * std::tanh(v / 2.0); });
  if (name == "row_l2_normalize") return a[0].lo >= 0 ? ValueRange{0.0, 1.0} : ValueRange{-1.0, 1.0};
  if (name == "bias_relu") return increasing(add(a[0], a[1]), [](double v) { return std::max(v, 0.0); });
  internal_error("value_range: custom kernel '" + name + "' has no rule");
}

}  // namespace

ValueRange ValueRange::of(double a, double b) { return {std::min(a, b), std::max(a, b)}; }

double ValueRange::magnitude() const { return std::max(std::abs(lo), std::abs(hi)); }

ValueRange range_union(const ValueRange& a, const ValueRange& b) {
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)};
}

ValueRange dist_range(const ValueDist& d, DType dtype) {
  if (dtype == DType::Bool) return {0.0, 1.0};
  switch (d.kind) {
    case ValueDist::Kind::Normal: return ValueRange::of(d.a - 6 * d.b, d.a + 6 * d.b);
    case ValueDist::Kind::Uniform:
    case ValueDist::Kind::Int: return ValueRange::of(d.a, d.b);
    case ValueDist::Kind::Bernoulli: return {0.0, 1.0};
    case ValueDist::Kind::Const: return ValueRange::point(d.a);
  }
  return {0.0, 0.0};
}

bool range_fits(const ValueRange& r, DType dtype) {
  if (!std::isfinite(r.lo) || !std::isfinite(r.hi)) return false;
  switch (dtype) {
    case DType::Bool: return true;
    case DType::UInt8: return r.lo >= 0 && r.hi <= 255;
    case DType::Int8: return r.lo >= -128 && r.hi <= 127;
    case DType::Int16: return r.lo >= -32768 && r.hi <= 32767;
    case DType::Int32: return r.lo >= -2147483648.0 && r.hi <= 2147483647.0;
    case DType::Int64: return r.magnitude() <= 9007199254740992.0;  // 2^53: exact in the double arithmetic here
    case DType::Float16: return r.magnitude() <= 1e4;
    case DType::BFloat16:
    case DType::Float32:
    case DType::Float64: return r.magnitude() <= 1e6;
  }
  return false;
}

std::optional<ValueRange> node_range(const Graph& g, const Node& node, const std::function<ValueRange(ValueId)>& range_of) {
  GBC_INTERNAL_ASSERT(!node.outputs.empty() && node.op != OpId::If, "node_range: '" + op_name(node.op) + "' has no range of its own");
  std::vector<ValueRange> a;
  for (const Arg& arg : node.args) {
    double v = arg.scalar.to_double();
    a.push_back(arg.is_value() ? range_of(arg.value) : ValueRange::point(std::isfinite(v) ? v : 0.0));
  }
  // An integer number is converted to the dtype of integer tensors it meets: -1 with a uint8
  // tensor is 255. Such wrap-arounds would make these ranges wrong, so they are refused.
  std::vector<Scalar> numbers;
  for (const Arg& arg : node.args)
    if (!arg.is_value()) numbers.push_back(arg.scalar);
  for (const char* bound : {"min", "max"})
    if (auto s = node.attr_scalar(bound); s && node.op == OpId::Clamp) numbers.push_back(*s);
  for (const Scalar& n : numbers) {
    if (n.kind != ScalarKind::Int) continue;
    for (const Arg& arg : node.args) {
      if (!arg.is_value() || !g.type(arg.value).is_tensor()) continue;
      DType d = g.type(arg.value).dtype;
      if (is_integral(d) && !range_fits(ValueRange::point(static_cast<double>(n.i)), d)) return std::nullopt;
    }
  }
  const ValueType& out_type = g.type(node.output());
  DType out = out_type.dtype;
  const OpSchema* schema = find_op_schema(node.op);
  GBC_INTERNAL_ASSERT(schema != nullptr, "node_range: unknown op '" + op_name(node.op) + "'");
  std::optional<ValueRange> r;
  switch (schema->cls) {
    case OpClass::Unary: r = unary(node.op, a[0], node); break;
    case OpClass::Binary:
    case OpClass::InPlace: r = binary(node, a[0], a[1], out); break;
    case OpClass::Where: r = range_union(a[1], a[2]); break;
    case OpClass::Clamp: {
      ValueRange x = a[0];
      if (auto lo = node.attr_scalar("min")) x = {std::max(x.lo, lo->to_double()), std::max(x.hi, lo->to_double())};
      if (auto hi = node.attr_scalar("max")) x = {std::min(x.lo, hi->to_double()), std::min(x.hi, hi->to_double())};
      r = x;
      break;
    }
    case OpClass::Cast: {
      const ValueType& in = g.type(node.args[0].value);
      if (is_integral(out) && is_floating(in.dtype)) r = ValueRange{std::trunc(a[0].lo), std::trunc(a[0].hi)};
      else r = a[0];
      break;
    }
    case OpClass::Reduction: r = reduction(g, node, a[0]); break;
    case OpClass::Normalization: r = normalization(g, node, a); break;
    case OpClass::Extern: r = external(g, node, a); break;
    case OpClass::View:
    case OpClass::HostScalar: r = a[0]; break;
    case OpClass::Cat: {
      ValueRange u = a[0];
      for (const auto& x : a) u = range_union(u, x);
      r = u;
      break;
    }
    case OpClass::Creation: {
      double v = node.attr_scalar("value")->to_double();
      r = ValueRange::point(std::isfinite(v) ? v : 0.0);
      break;
    }
    case OpClass::Random: {
      double p = node.attr_float("p", 0.5);
      if (!node.attr_bool("training", true)) r = a[0];
      else if (p >= 1) r = ValueRange::point(0.0);
      else r = ValueRange{std::min(0.0, a[0].lo / (1 - p)), std::max(0.0, a[0].hi / (1 - p))};
      break;
    }
    case OpClass::DataDependent: {
      int64_t largest = 1;
      for (const auto& d : g.type(node.args[0].value).shape) largest = std::max(largest, g.dims.max_of(d));
      r = ValueRange{0.0, static_cast<double>(largest - 1)};
      break;
    }
    case OpClass::Custom: r = custom(node, a); break;
    case OpClass::Effect:
    case OpClass::Control: break;
  }
  if (r && out_type.is_tensor() && out == DType::Bool) r = ValueRange{0.0, 1.0};
  return r;
}

}  // namespace gbc
