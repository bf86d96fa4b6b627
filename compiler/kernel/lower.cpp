// Lowering of fusion groups to kernels (lower.h): one pass over the members in program order,
// building tagged expressions; ATen's conversions of numbers are evaluated here with the prelude's
// own cast functions, so constants hold exactly what the kernel would compute.
#include "compiler/kernel/lower.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "compiler/ir/kernel_prelude.h"
#include "compiler/ir/op_schema.h"

namespace gbc {
namespace {

using kir::ExprPtr;
using kir::Level;

bool same_shape(const DimSpace& dims, const SymShape& a, const SymShape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (dims.equal(a[i], b[i]) != Truth::Always) return false;
  return true;
}

// An integer wrapped to an integral dtype's width (two's complement), as ATen's casts do.
int64_t wrap_int(DType dtype, int64_t v) {
  switch (dtype) {
    case DType::Bool: return v != 0;
    case DType::UInt8: return gbc_cast_uint8(v);
    case DType::Int8: return gbc_cast_int8(v);
    case DType::Int16: return gbc_cast_int16(v);
    case DType::Int32: return gbc_cast_int32(v);
    default: return v;
  }
}

// A double converted to a floating dtype's precision (float16 and bfloat16 through float, as
// c10::Half does), returned as a double.
double round_to(DType dtype, double v) {
  switch (dtype) {
    case DType::Float16: return gbc_round_float16(static_cast<float>(v));
    case DType::BFloat16: return gbc_round_bfloat16(static_cast<float>(v));
    case DType::Float32: return static_cast<float>(v);
    default: return v;
  }
}

// A number from the model as a value of `dtype`: ATen converts a wrapped number to the common
// dtype before the kernel sees it.
struct NumberValue {
  bool integral = false;
  int64_t i = 0;
  double f = 0.0;
};

NumberValue convert_number(const Scalar& s, DType dtype) {
  NumberValue v;
  if (!is_floating(dtype)) {
    v.integral = true;
    if (dtype == DType::Bool) v.i = s.kind == ScalarKind::Float ? (s.f != 0.0) : s.to_int() != 0;
    else v.i = wrap_int(dtype, s.kind == ScalarKind::Float ? gbc_cast_int64(s.f) : s.to_int());
    return v;
  }
  if (s.kind == ScalarKind::Float) v.f = round_to(dtype, s.f);
  else if (dtype == DType::Float64) v.f = static_cast<double>(s.to_int());
  else v.f = round_to(dtype, static_cast<float>(s.to_int()));  // int64 to float directly, as C does
  return v;
}

// One argument of a node while lowering: an expression in its value's compute dtype, or a
// number written in the model (converted only once the common dtype is known).
struct Operand {
  ExprPtr expr;  // null for a number
  Scalar number;
  DType dtype = DType::Float32;  // the value's dtype (tensors), the number's default dtype
  PromotionOperand promotion{PromotionOperand::Rank::Number, DType::Float32};
  bool is_number() const { return expr == nullptr; }
};

class Lowerer {
 public:
  Lowerer(const Graph& graph, const Block& block, const FusionGroup& group, const LowerOptions& options)
      : g_(graph), block_(block), group_(group), options_(options) {}

  LoweredKernel run(const std::string& name) {
    GBC_INTERNAL_ASSERT(!group_.nodes.empty(), "lower: empty fusion group");
    out_.kernel.name = name;
    out_.kernel.fault = options_.fault;
    setup_iteration_space();
    for (size_t k = 0; k < group_.nodes.size(); ++k) {
      node_ = static_cast<int>(k);
      const Node& node = block_.nodes.at(group_.nodes[k]);
      out_.kernel.node_names.push_back(node.outputs.empty() ? op_name(node.op) : g_.name_of(node.output()));
      out_.kernel.node_locs.push_back(node.loc);
      ExprPtr value = is_elementwise_op(node.op) ? lower_elementwise(node) : lower_reduction(node);
      // A node whose value is an operand's expression unchanged still gets one of its own.
      if (value->node != node_) value = mk(kir::cast(value, value->dtype));
      out_.kernel.node_values.push_back(value);
      values_[node.output()] = {value, level_of(node)};
    }
    add_stores();
    return std::move(out_);
  }

 private:
  struct InGroupValue {
    ExprPtr expr;
    Level level;
    ExprPtr rounded;  // float16/bfloat16 values: expr rounded to the dtype (rounded_for_use)
  };

  void setup_iteration_space() {
    reduction_ = group_.kind == FusionGroup::Kind::Reduction;
    out_.kernel.kind = reduction_ ? kir::KernelKind::Reduction : kir::KernelKind::Pointwise;
    if (!reduction_) {
      // The last member's shape: members of smaller shapes are broadcast prologues.
      out_.iter_shape = g_.type(block_.nodes.at(group_.nodes.back()).output()).shape;
      return;
    }
    for (size_t m : group_.nodes) {
      const Node& node = block_.nodes.at(m);
      if (is_elementwise_op(node.op)) continue;
      out_.iter_shape = g_.type(node.args.at(0).value).shape;
      out_.reduced_dims = reduced_dims_of(g_, node);
      break;
    }
    for (int d = 0; d < static_cast<int>(out_.iter_shape.size()); ++d) {
      bool reduced = std::binary_search(out_.reduced_dims.begin(), out_.reduced_dims.end(), d);
      keep_shape_.push_back(reduced ? DimExpr(1) : out_.iter_shape[static_cast<size_t>(d)]);
      if (!reduced) {
        kept_dims_.push_back(d);
        kept_shape_.push_back(out_.iter_shape[static_cast<size_t>(d)]);
      }
    }
  }

  // As the partitioner decides it: elementwise members at the iteration shape, and broadcast
  // prologues of smaller shapes, are evaluated per element; reductions and members at the
  // reduced shape (with or without keepdim) once per row.
  Level level_of(const Node& node) const {
    if (!reduction_) return Level::Full;
    if (!is_elementwise_op(node.op)) return Level::Outer;
    const SymShape& shape = g_.type(node.output()).shape;
    if (same_shape(g_.dims, shape, out_.iter_shape)) return Level::Full;
    bool per_row = same_shape(g_.dims, shape, keep_shape_) || same_shape(g_.dims, shape, kept_shape_);
    return per_row ? Level::Outer : Level::Full;
  }

  // Tags an expression built for the current node.
  ExprPtr mk(ExprPtr e) const {
    auto copy = std::make_shared<kir::Expr>(*e);
    copy->node = node_;
    return copy;
  }
  ExprPtr op(const std::string& name, DType dtype, std::vector<ExprPtr> args) const {
    return mk(kir::op(name, dtype, std::move(args)));
  }
  ExprPtr constant(DType dtype, double v) const { return mk(kir::constant(compute_dtype(dtype), v)); }

  // A member's float16/bfloat16 value as a later member reads it: rounded to its dtype, as eager
  // rounds it (every ATen op writes a tensor of its half dtype, while a fused kernel computes in
  // float32). Without it a chain keeps bits eager drops, and a later round, comparison or integer
  // cast turns that into a different discrete result. Stores narrow by themselves; values a `to`
  // node already rounded are left alone. Made once per value, tagged with its producer.
  ExprPtr rounded_for_use(InGroupValue& v, DType storage) const {
    const char* round = storage == DType::Float16 ? "round_float16" : storage == DType::BFloat16 ? "round_bfloat16" : nullptr;
    if (!round || (v.expr->kind == kir::ExprKind::Op && v.expr->op == round)) return v.expr;
    if (!v.rounded) {
      auto r = std::make_shared<kir::Expr>(*kir::op(round, DType::Float32, {v.expr}));
      r->node = v.expr->node;
      v.rounded = r;
    }
    return v.rounded;
  }

  // Converts an expression holding a value of dtype `from` to dtype `to` (in to's compute dtype).
  ExprPtr convert(ExprPtr e, DType from, DType to) const {
    if (from == to) return e;
    if (compute_dtype(from) != compute_dtype(to)) e = mk(kir::cast(e, compute_dtype(to)));
    if (to == DType::Float16) e = op("round_float16", DType::Float32, {e});
    if (to == DType::BFloat16) e = op("round_bfloat16", DType::Float32, {e});
    return e;
  }

  // keep_float32: a number next to a float16/bfloat16 tensor in an op for which ATen keeps it
  // float32 (LowerOptions::half_numbers_in_float32).
  ExprPtr number_expr(const Scalar& s, DType dtype, bool keep_float32 = false) const {
    const bool half = dtype == DType::Float16 || dtype == DType::BFloat16;
    NumberValue v = convert_number(s, half && keep_float32 ? DType::Float32 : dtype);
    return v.integral ? mk(kir::constant_int(compute_dtype(dtype), v.i)) : constant(dtype, v.f);
  }

  // The operand converted to the common dtype `to`.
  ExprPtr as(const Operand& o, DType to, bool keep_float32 = false) const {
    return o.is_number() ? number_expr(o.number, to, keep_float32) : convert(o.expr, o.dtype, to);
  }

  int input_buffer(ValueId v, Level level, size_t consumer_rank) {
    auto key = std::make_tuple(v, level, consumer_rank);
    auto it = buffers_.find(key);
    if (it != buffers_.end()) return it->second;
    const ValueType& t = g_.type(v);
    std::vector<int> dims;
    for (size_t j = 0; j < t.rank(); ++j) {
      int aligned = static_cast<int>(consumer_rank - t.rank() + j);
      // A per-row consumer without the reduced dims runs over the kept dims.
      bool kept_form = level == Level::Outer && consumer_rank != out_.iter_shape.size();
      dims.push_back(kept_form ? kept_dims_.at(static_cast<size_t>(aligned)) : aligned);
    }
    int index = add_buffer(v, level, false, dims);
    buffers_[key] = index;
    return index;
  }

  int add_buffer(ValueId v, Level level, bool is_output, std::vector<int> dims) {
    kir::Buffer b;
    // A value read at two levels gets two buffers; the second is named "x.1".
    int seen = name_count_[g_.name_of(v)]++;
    b.name = g_.name_of(v) + (seen ? "." + std::to_string(seen) : "");
    b.dtype = g_.type(v).dtype;
    b.is_output = is_output;
    b.level = level;
    out_.kernel.buffers.push_back(b);
    out_.buffer_values.push_back(v);
    out_.buffer_dims.push_back(std::move(dims));
    return static_cast<int>(out_.kernel.buffers.size()) - 1;
  }

  Operand operand(const Node& node, size_t i, Level level) {
    const Arg& a = node.args.at(i);
    Operand o;
    if (!a.is_value()) {
      o.number = a.scalar;
      o.dtype = scalar_kind_default_dtype(a.scalar.kind);
      o.promotion = {PromotionOperand::Rank::Number, o.dtype};
      return o;
    }
    const ValueType& t = g_.type(a.value);
    if (t.is_scalar()) {
      auto it = std::find(out_.scalar_values.begin(), out_.scalar_values.end(), a.value);
      int index = static_cast<int>(it - out_.scalar_values.begin());
      // Host scalars arrive as doubles: floats keep float64, ints int64.
      DType carried = t.scalar_kind == ScalarKind::Float ? DType::Float64
                      : t.scalar_kind == ScalarKind::Int ? DType::Int64
                                                         : DType::Bool;
      if (it == out_.scalar_values.end()) {
        out_.scalar_values.push_back(a.value);
        out_.kernel.scalar_args.push_back(carried);
      }
      o.expr = mk(kir::scalar_arg(index, carried));
      o.dtype = carried;
      o.promotion = {PromotionOperand::Rank::Number, scalar_kind_default_dtype(t.scalar_kind)};
      return o;
    }
    o.dtype = t.dtype;
    o.promotion = {t.rank() ? PromotionOperand::Rank::Dimensioned : PromotionOperand::Rank::ZeroDim, t.dtype};
    auto it = values_.find(a.value);
    if (it != values_.end()) {
      GBC_INTERNAL_ASSERT(level == Level::Full || it->second.level == Level::Outer,
                          "lower: a per-row node reads the full-shape value '" + g_.name_of(a.value) + "'");
      o.expr = rounded_for_use(it->second, t.dtype);
      return o;
    }
    size_t consumer_rank = level == Level::Full ? out_.iter_shape.size() : g_.type(node.output()).rank();
    o.expr = mk(kir::load(input_buffer(a.value, level, consumer_rank), compute_dtype(t.dtype)));
    return o;
  }

  ExprPtr lower_elementwise(const Node& node) {
    Level level = level_of(node);
    std::vector<Operand> ops;
    for (size_t i = 0; i < node.args.size(); ++i) ops.push_back(operand(node, i, level));
    DType out = g_.type(node.output()).dtype;
    DType ct = compute_dtype(out);
    const OpSchema* schema = find_op_schema(node.op);
    switch (schema->cls) {
      case OpClass::Unary: {
        if (node.op == OpId::LogicalNot) return op("logical_not", DType::Bool, {ops[0].expr});
        GBC_INTERNAL_ASSERT(options_.fault != InjectedFault::Assert || node.op != kAssertFaultOp,
                            "lower: " + op_name(node.op) + "'s operand has no compute dtype (--inject-fault assert)");
        std::string name = op_name(node.op);
        if (node.op == OpId::Gelu && node.attr_string("approximate", "none") == "tanh") name = "gelu_tanh";
        return op(name, ct, {as(ops[0], out)});
      }
      case OpClass::Binary: return lower_binary(node, ops, out);
      case OpClass::Where: {
        ExprPtr cond = as(ops[0], DType::Bool);
        return op("where", ct, {cond, as(ops[1], out), as(ops[2], out)});
      }
      case OpClass::Clamp: {
        auto e = std::make_shared<kir::Expr>(*op("clamp", ct, {ops[0].expr}));
        auto bound = [&](const char* attr, bool& has, double& value) {
          auto s = node.attr_scalar(attr);
          if (!s) return;
          has = true;
          NumberValue v = convert_number(*s, out);
          value = v.integral ? static_cast<double>(v.i) : v.f;
        };
        bound("min", e->has_min, e->min);
        bound("max", e->has_max, e->max);
        return e;
      }
      case OpClass::Cast: return convert(ops[0].expr, ops[0].dtype, out);
      default: break;
    }
    internal_error("lower: '" + op_name(node.op) + "' is not elementwise");
  }

  ExprPtr lower_binary(const Node& node, const std::vector<Operand>& ops, DType out) {
    const OpId id = node.op;
    DType common = result_type({ops[0].promotion, ops[1].promotion});
    static const std::vector<OpId> boolean = {OpId::Eq, OpId::Ne, OpId::Lt,         OpId::Le,
                                              OpId::Gt, OpId::Ge, OpId::LogicalAnd, OpId::LogicalOr};
    const bool keep = options_.half_numbers_in_float32.count(id) != 0;
    if (std::find(boolean.begin(), boolean.end(), id) != boolean.end())
      return op(op_name(id), DType::Bool, {as(ops[0], common, keep), as(ops[1], common, keep)});
    // Arithmetic computes in the result type (true division of integers in float32: `out`).
    if (id == OpId::Pow && ops[1].is_number()) return lower_pow_number(ops[0], ops[1].number, out);
    if (options_.fault == InjectedFault::Const && is_floating(out) && (ops[0].is_number() || ops[1].is_number()) &&
        (id == OpId::Add || id == OpId::Sub || id == OpId::Mul || id == OpId::Div))
      return op(op_name(id), compute_dtype(out), {wrong_constant(ops[0], out), wrong_constant(ops[1], out)});
    if (options_.fault == InjectedFault::NanDrop && is_floating(out) && (id == OpId::Maximum || id == OpId::Minimum)) {
      // A compare-and-select: when the first operand is NaN the comparison is false and it is lost.
      ExprPtr a = as(ops[0], out), b = as(ops[1], out);
      ExprPtr first = op(id == OpId::Maximum ? "gt" : "lt", DType::Bool, {a, b});
      return op("where", compute_dtype(out), {first, a, b});
    }
    return op(op_name(id), compute_dtype(out), {as(ops[0], out, keep), as(ops[1], out, keep)});
  }

  // InjectedFault::Const: a number operand lowered 2^-7 of its magnitude (at least 2^-7) too large.
  ExprPtr wrong_constant(const Operand& o, DType out) const {
    if (!o.is_number()) return as(o, out);
    double v = convert_number(o.number, out).f;
    return constant(out, round_to(out, v + std::max(std::abs(v), 1.0) * 0.0078125));
  }

  // InjectedFault::NanDrop: a NaN in a max/min reduction becomes the combine's identity.
  ExprPtr drop_nan(ExprPtr x, DType ct, double identity) const {
    if (options_.fault != InjectedFault::NanDrop || !is_floating(ct)) return x;
    return op("where", ct, {op("ne", DType::Bool, {x, x}), constant(ct, identity), x});
  }

  // pow with a number exponent takes ATen's shortcuts (PowKernel.cpp) so that results match
  // eager bit for bit: x**0 is 1 and x**1 is x for every dtype; float32/float64/bfloat16 use
  // sqrt, rsqrt and reciprocal for 0.5, -0.5 and -1, and products for 2, 3 and -2. float16 calls
  // pow for everything else.
  ExprPtr lower_pow_number(const Operand& base, const Scalar& exponent, DType out) {
    DType ct = compute_dtype(out);
    double e = exponent.to_double();
    if (e == 0.0) return constant(out, 1.0);
    ExprPtr x = as(base, out);
    if (e == 1.0) return x;
    if (is_floating(out) && out != DType::Float16) {
      if (e == 0.5) return op("sqrt", ct, {x});
      if (e == -0.5) return op("rsqrt", ct, {x});
      if (e == -1.0) return op("reciprocal", ct, {x});
      if (e == 2.0) return op("mul", ct, {x, x});
      if (e == 3.0) return op("mul", ct, {op("mul", ct, {x, x}), x});
      if (e == -2.0) return op("div", ct, {constant(out, 1.0), op("mul", ct, {x, x})});
    }
    return op("pow", ct, {x, number_expr(exponent, out)});
  }

  // The accumulator for sums and products of floating values.
  DType float_acc(DType input) const {
    if (options_.target == LowerOptions::Target::Cpu || compute_dtype(input) == DType::Float64) return DType::Float64;
    return DType::Float32;
  }

  ExprPtr add_stage(kir::Combine combine, DType acc, ExprPtr value) {
    GBC_INTERNAL_ASSERT(value->dtype == acc, "lower: stage value dtype differs from its accumulator");
    out_.kernel.stages.push_back({combine, acc, value});
    int index = static_cast<int>(out_.kernel.stages.size()) - 1;
    return mk(kir::stage_result(index, combine == kir::Combine::ArgMax ? DType::Int64 : acc));
  }

  // The number of reduced elements in dtype `acc`: a constant when the reduced dims are static,
  // else a stage summing ones (once per kernel).
  ExprPtr reduced_count(DType acc) {
    DimExpr n = 1;
    for (int d : out_.reduced_dims) n = n * out_.iter_shape[static_cast<size_t>(d)];
    if (n.is_const()) return constant(acc, static_cast<double>(n.value()));
    if (!count_stage_) count_stage_ = add_stage(kir::Combine::Sum, DType::Int64, mk(kir::constant_int(DType::Int64, 1)));
    return mk(kir::cast(*count_stage_, acc));
  }

  ExprPtr lower_reduction(const Node& node) {
    Operand in = operand(node, 0, Level::Full);
    DType in_dt = in.dtype, ci = compute_dtype(in_dt);
    DType out = g_.type(node.output()).dtype;
    const OpId id = node.op;
    if (id == OpId::Sum || id == OpId::Prod) {
      DType acc = is_floating(in_dt) ? float_acc(in_dt) : DType::Int64;
      ExprPtr r = add_stage(id == OpId::Sum ? kir::Combine::Sum : kir::Combine::Prod, acc, convert(in.expr, in_dt, acc));
      return convert(r, acc, out);
    }
    const double inf = std::numeric_limits<double>::infinity();
    if (id == OpId::Amax) return add_stage(kir::Combine::Max, ci, drop_nan(in.expr, ci, -inf));
    if (id == OpId::Amin) return add_stage(kir::Combine::Min, ci, drop_nan(in.expr, ci, inf));
    if (id == OpId::Argmax) return add_stage(kir::Combine::ArgMax, ci, in.expr);
    DType acc = float_acc(in_dt);
    ExprPtr x = convert(in.expr, in_dt, acc);
    if (id == OpId::Mean) {
      ExprPtr sum = add_stage(kir::Combine::Sum, acc, x);
      return convert(op("div", acc, {sum, reduced_count(acc)}), acc, out);
    }
    if (id == OpId::Var) {
      // Two passes (mean, then squared deviations) in the wide accumulator; ATen divides by
      // max(n - correction, 0).
      ExprPtr n = reduced_count(acc);
      ExprPtr mean = op("div", acc, {add_stage(kir::Combine::Sum, acc, x), n});
      ExprPtr d = op("sub", acc, {x, mean});
      ExprPtr m2 = add_stage(kir::Combine::Sum, acc, op("mul", acc, {d, d}));
      double correction = static_cast<double>(node.attr_int("correction", 1));
      ExprPtr divisor = op("maximum", acc, {op("sub", acc, {n, constant(acc, correction)}), constant(acc, 0.0)});
      return convert(op("div", acc, {m2, divisor}), acc, out);
    }
    if (id == OpId::Logsumexp) {
      // As ATen: an infinite maximum is replaced by 0 before shifting, so all -inf gives -inf.
      ExprPtr m = add_stage(kir::Combine::Max, ci, in.expr);
      ExprPtr inf = constant(ci, std::numeric_limits<double>::infinity());
      ExprPtr shift = op("where", ci, {op("eq", DType::Bool, {op("abs", ci, {m}), inf}), constant(ci, 0.0), m});
      ExprPtr e = op("exp", ci, {op("sub", ci, {in.expr, shift})});
      ExprPtr s = add_stage(kir::Combine::Sum, acc, convert(e, ci, acc));
      return op("add", ci, {convert(op("log", acc, {s}), acc, ci), shift});
    }
    internal_error("lower: '" + op_name(id) + "' is not a reduction");
  }

  void add_stores() {
    for (ValueId v : group_.outputs) {
      auto it = values_.find(v);
      GBC_INTERNAL_ASSERT(it != values_.end(), "lower: group output '" + g_.name_of(v) + "' is not computed by the group");
      Level level = it->second.level;
      const SymShape& shape = g_.type(v).shape;
      std::vector<int> dims;
      bool kept_form = level == Level::Outer && shape.size() != out_.iter_shape.size();
      for (size_t j = 0; j < shape.size(); ++j) dims.push_back(kept_form ? kept_dims_.at(j) : static_cast<int>(j));
      int b = add_buffer(v, level, true, dims);
      out_.kernel.stores.push_back({b, it->second.expr});
    }
  }

  const Graph& g_;
  const Block& block_;
  const FusionGroup& group_;
  const LowerOptions& options_;
  LoweredKernel out_;
  bool reduction_ = false;
  std::vector<int> kept_dims_;
  SymShape keep_shape_, kept_shape_;  // the reduced shape with and without keepdim
  int node_ = -1;
  std::map<ValueId, InGroupValue> values_;
  std::map<std::tuple<ValueId, Level, size_t>, int> buffers_;
  std::optional<ExprPtr> count_stage_;
  std::map<std::string, int> name_count_;
};

}  // namespace

LoweredKernel lower_group(const Graph& graph, const Block& block, const FusionGroup& group,
                          const std::string& kernel_name, const LowerOptions& options) {
  return Lowerer(graph, block, group, options).run(kernel_name);
}

}  // namespace gbc
