#include "compiler/ir/infer.h"

#include <algorithm>
#include <numeric>

#include "compiler/ir/custom_ops.h"
#include "compiler/ir/generic_op.h"
#include "compiler/ir/op_schema.h"

namespace gbc {
namespace {

std::string dims_str(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// State for inferring one node: its arguments' types and a place to report errors.
class Inferrer {
 public:
  Inferrer(Graph& g, Node& n, Diagnostics& d) : g_(g), n_(n), d_(d), schema_(find_op_schema(n.op)) {}

  bool run() {
    GBC_INTERNAL_ASSERT(schema_ != nullptr, "no schema for op '" + op_name(n_.op) + "'");
    // Unknown arguments come from nodes that already reported an error: stay quiet.
    for (const auto& a : n_.args)
      if (a.is_value() && !g_.type(a.value).known()) return set_unknown();
    if (is_generic_op(n_)) return generic();
    std::optional<ValueType> out = infer();
    if (failed_ || !out) return set_unknown();
    if (!n_.outputs.empty()) g_.value(n_.outputs[0]).type = *out;
    return true;
  }

 private:
  // The typer runs the operator on meta tensors; it may give several results (aten::max.dim).
  bool generic() {
    const GenericOpTyper& typer = generic_op_typer();
    if (!typer) {
      error("generic ATen ops need LibTorch to infer their types, and this tool runs without it");
      return set_unknown();
    }
    for (size_t i = 0; i < n_.args.size(); ++i)
      if (is_number(i)) {
        error("arg " + std::to_string(i + 1) + " is a number; a generic op's args are its tensors",
              "write other arguments under attrs: by their schema names");
        return set_unknown();
      }
    std::vector<ValueType> results;
    try {
      results = typer(g_, n_);
    } catch (const std::invalid_argument& e) {
      error(e.what());
      return set_unknown();
    }
    if (results.size() != n_.outputs.size()) {
      error(generic_op_name(n_) + " returns " + std::to_string(results.size()) + " results, the node names " +
                std::to_string(n_.outputs.size()),
            "give id: a list with one name per result");
      return set_unknown();
    }
    for (size_t i = 0; i < results.size(); ++i) g_.value(n_.outputs[i]).type = results[i];
    return true;
  }

  bool set_unknown() {
    for (ValueId o : n_.outputs) g_.value(o).type = ValueType{};
    return false;
  }

  std::nullopt_t error(const std::string& message, const std::string& hint = "") {
    d_.error(n_.loc, op_name(n_.op) + ": " + message, hint);
    failed_ = true;
    return std::nullopt;
  }

  bool is_number(size_t i) const { return !n_.args[i].is_value() || g_.type(n_.args[i].value).is_scalar(); }
  const ValueType& tensor(size_t i) const { return g_.type(n_.args[i].value); }
  std::string arg_name(size_t i) const {
    return n_.args[i].is_value() ? "'" + g_.name_of(n_.args[i].value) + "'" : n_.args[i].scalar.str();
  }

  PromotionOperand operand(size_t i) const {
    if (!n_.args[i].is_value()) {
      return {PromotionOperand::Rank::Number, scalar_kind_default_dtype(n_.args[i].scalar.kind)};
    }
    const ValueType& t = g_.type(n_.args[i].value);
    if (t.is_scalar()) return {PromotionOperand::Rank::Number, scalar_kind_default_dtype(t.scalar_kind)};
    return {t.rank() ? PromotionOperand::Rank::Dimensioned : PromotionOperand::Rank::ZeroDim, t.dtype};
  }

  // Tensor-only arguments must be tensors; numbers only where the schema allows them.
  bool check_arg_kinds(size_t first_tensor_only = 0) {
    for (size_t i = first_tensor_only; i < n_.args.size(); ++i) {
      if (is_number(i)) {
        error("argument " + std::to_string(i + 1) + " (" + arg_name(i) + ") must be a tensor",
              "numbers are allowed in args only where ATen takes a Scalar (" + schema_->signature + ")");
        return false;
      }
    }
    return true;
  }

  std::optional<SymShape> broadcast_all(const std::vector<size_t>& idx) {
    std::optional<SymShape> shape = SymShape{};
    for (size_t i : idx) {
      if (is_number(i)) continue;
      std::string conflict;
      auto next = broadcast_shapes(g_.dims, *shape, tensor(i).shape, &conflict);
      if (!next) {
        std::string shapes;
        for (size_t j : idx)
          if (!is_number(j)) shapes += (shapes.empty() ? "" : " and ") + shape_str(tensor(j).shape);
        return error("shapes " + shapes + " do not broadcast (" + conflict + ")",
                     "sizes must be equal or 1 in every aligned dim, counting from the last; reshape or "
                     "unsqueeze one operand");
      }
      shape = next;
    }
    return shape;
  }

  std::optional<int64_t> dim_in_range(int64_t dim, int64_t rank, const std::string& what = "dim") {
    auto d = normalize_dim(dim, rank);
    if (!d) {
      int64_t lo = rank == 0 ? -1 : -rank, hi = rank == 0 ? 0 : rank - 1;
      return error(what + " " + std::to_string(dim) + " is out of range for a " + std::to_string(rank) +
                       "-d tensor (expected " + std::to_string(lo) + ".." + std::to_string(hi) + ")");
    }
    return d;
  }

  bool require_floating(size_t i) {
    if (!is_floating(tensor(i).dtype)) {
      error("needs a floating-point tensor, got " + std::string(dtype_name(tensor(i).dtype)) + " for " + arg_name(i),
            "cast first: {op: to, args: [" + g_.name_of(n_.args[i].value) + "], dtype: float32}");
      return false;
    }
    return true;
  }

  // Every operand a tensor, all of one floating dtype (matmul, conv2d, addmm: ATen's BLAS calls).
  bool same_floating_operands() {
    if (!check_arg_kinds()) return false;
    for (size_t i = 0; i < n_.args.size(); ++i)
      if (!require_floating(i) || !same_dtype(0, i)) return false;
    return true;
  }

  bool same_dtype(size_t i, size_t j) {
    if (tensor(i).dtype != tensor(j).dtype) {
      error("dtypes differ: " + arg_name(i) + " is " + std::string(dtype_name(tensor(i).dtype)) + ", " +
                arg_name(j) + " is " + std::string(dtype_name(tensor(j).dtype)),
            "cast one with {op: to, dtype: ...} so both match");
      return false;
    }
    return true;
  }

  // Requires dims a and b to be equal for every binding of the model's dims.
  bool dims_equal(const DimExpr& a, const DimExpr& b, const std::string& what, const std::string& hint) {
    Truth t = g_.dims.equal(a, b);
    if (t == Truth::Always) return true;
    error(what + " (" + a.str() + " vs " + b.str() + (t == Truth::Sometimes ? ", equal only for some dim values" : "") + ")",
          hint);
    return false;
  }

  std::optional<ValueType> infer();
  std::optional<ValueType> unary();
  std::optional<ValueType> binary();
  std::optional<ValueType> where();
  std::optional<ValueType> clamp();
  std::optional<ValueType> reduction();
  std::optional<ValueType> normalization();
  std::optional<ValueType> matmul_like();
  std::optional<ValueType> conv2d();
  std::optional<ValueType> pool2d();
  std::optional<ValueType> adaptive_pool2d();
  std::optional<ValueType> add_matmul();
  std::optional<ValueType> embedding();
  std::optional<ValueType> view();
  std::optional<ValueType> cat();
  std::optional<ValueType> full();
  std::optional<ValueType> item();
  std::optional<ValueType> if_node();
  std::optional<ValueType> nonzero();
  std::optional<ValueType> custom();
  std::optional<ValueType> in_place();

  Graph& g_;
  Node& n_;
  Diagnostics& d_;
  const OpSchema* schema_;
  bool failed_ = false;
};

std::optional<ValueType> Inferrer::infer() {
  switch (schema_->cls) {
    case OpClass::Unary: return unary();
    case OpClass::Binary: return binary();
    case OpClass::Where: return where();
    case OpClass::Clamp: return clamp();
    case OpClass::Cast:
      if (!check_arg_kinds()) return std::nullopt;
      return ValueType::tensor(*n_.attr_dtype("dtype"), tensor(0).shape);
    case OpClass::Reduction: return reduction();
    case OpClass::Normalization: return normalization();
    case OpClass::Extern:
      if (n_.op == OpId::Conv2d) return conv2d();
      if (n_.op == OpId::MaxPool2d || n_.op == OpId::AvgPool2d) return pool2d();
      if (n_.op == OpId::AdaptiveAvgPool2d) return adaptive_pool2d();
      if (n_.op == OpId::Addmm || n_.op == OpId::Baddbmm) return add_matmul();
      if (n_.op == OpId::Embedding) return embedding();
      return matmul_like();
    case OpClass::View: return view();
    case OpClass::Cat: return cat();
    case OpClass::Creation: return full();
    case OpClass::Random:
      if (!check_arg_kinds() || !require_floating(0)) return std::nullopt;
      if (double p = n_.attr_float("p", 0.5); p < 0 || p > 1) return error("p must be in [0, 1], got " + std::to_string(p));
      return tensor(0);
    case OpClass::Effect: return ValueType{};
    case OpClass::HostScalar: return item();
    case OpClass::Control: return if_node();
    case OpClass::DataDependent: return nonzero();
    case OpClass::Custom: return custom();
    case OpClass::InPlace: return in_place();
  }
  return std::nullopt;
}

std::optional<ValueType> Inferrer::unary() {
  if (!check_arg_kinds()) return std::nullopt;
  const ValueType& x = tensor(0);
  const OpId op = n_.op;
  static const std::vector<OpId> to_float = {OpId::Exp, OpId::Log, OpId::Log1p,   OpId::Expm1, OpId::Sqrt, OpId::Rsqrt,
                                             OpId::Sin, OpId::Cos, OpId::Tanh,    OpId::Sigmoid, OpId::Erf, OpId::Reciprocal};
  static const std::vector<OpId> float_only = {OpId::Gelu, OpId::Silu, OpId::Hardswish, OpId::Hardsigmoid};
  static const std::vector<OpId> no_bool = {OpId::Neg, OpId::Abs, OpId::Relu, OpId::Floor, OpId::Ceil, OpId::Round};
  if (op == OpId::LogicalNot) return ValueType::tensor(DType::Bool, x.shape);
  if (std::find(to_float.begin(), to_float.end(), op) != to_float.end())
    return ValueType::tensor(is_floating(x.dtype) ? x.dtype : DType::Float32, x.shape);
  if (std::find(float_only.begin(), float_only.end(), op) != float_only.end()) {
    if (!require_floating(0)) return std::nullopt;
    return x;
  }
  if (x.dtype == DType::Bool && std::find(no_bool.begin(), no_bool.end(), op) != no_bool.end())
    return error("is not defined for bool tensors", op == OpId::Neg ? "use logical_not to invert a mask"
                                                                : "cast to an integer or float dtype first");
  return x;
}

std::optional<ValueType> Inferrer::binary() {
  if (is_number(0) && is_number(1)) return error("needs at least one tensor operand, got two numbers");
  const OpId op = n_.op;
  auto shape = broadcast_all({0, 1});
  if (!shape) return std::nullopt;
  static const std::vector<OpId> compare = {OpId::Eq, OpId::Ne, OpId::Lt,         OpId::Le,
                                            OpId::Gt, OpId::Ge, OpId::LogicalAnd, OpId::LogicalOr};
  if (std::find(compare.begin(), compare.end(), op) != compare.end()) return ValueType::tensor(DType::Bool, *shape);
  DType dt = result_type({operand(0), operand(1)});
  if (op == OpId::Sub && (operand(0).dtype == DType::Bool || operand(1).dtype == DType::Bool))
    return error("subtraction with a bool operand is not supported", "use logical_xor-style logic, or cast to int first");
  if ((op == OpId::Remainder || op == OpId::Pow) && dt == DType::Bool)
    return error("is not defined for bool operands", "cast to an integer or float dtype first");
  if (op == OpId::Div && !is_floating(dt)) dt = DType::Float32;
  return ValueType::tensor(dt, *shape);
}

std::optional<ValueType> Inferrer::where() {
  if (is_number(0)) return error("condition must be a bool tensor, got the number " + arg_name(0));
  if (tensor(0).dtype != DType::Bool)
    return error("condition must be a bool tensor, got " + std::string(dtype_name(tensor(0).dtype)),
                 "compare first, e.g. {op: ne, args: [" + g_.name_of(n_.args[0].value) + ", 0]}");
  if (is_number(1) && is_number(2)) return error("needs at least one tensor among self and other");
  auto shape = broadcast_all({0, 1, 2});
  if (!shape) return std::nullopt;
  return ValueType::tensor(result_type({operand(1), operand(2)}), *shape);
}

std::optional<ValueType> Inferrer::clamp() {
  if (!check_arg_kinds()) return std::nullopt;
  auto lo = n_.attr_scalar("min"), hi = n_.attr_scalar("max");
  if (!lo && !hi) return error("needs min or max (or both)");
  if (tensor(0).dtype == DType::Bool) return error("is not defined for bool tensors");
  std::vector<PromotionOperand> ops = {operand(0)};
  for (const auto& s : {lo, hi})
    if (s) ops.push_back({PromotionOperand::Rank::Number, scalar_kind_default_dtype(s->kind)});
  DType dt = result_type(ops);
  if (dt != tensor(0).dtype)
    return error("a " + std::string(dtype_name(tensor(0).dtype)) + " tensor with float bounds would change dtype",
                 "use integer bounds, or cast the tensor to float first");
  return tensor(0);
}

std::optional<ValueType> Inferrer::reduction() {
  if (!check_arg_kinds()) return std::nullopt;
  const ValueType& x = tensor(0);
  const OpId op = n_.op;
  int64_t rank = static_cast<int64_t>(x.rank());
  bool keepdim = n_.attr_bool("keepdim", false);
  std::vector<bool> reduced(static_cast<size_t>(rank), false);
  auto dims = n_.attr_int_list("dim");
  bool all = !dims || dims->empty();
  if (!all) {
    for (int64_t d : *dims) {
      auto nd = dim_in_range(d, rank);
      if (!nd) return std::nullopt;
      if (rank > 0) {
        if (reduced[static_cast<size_t>(*nd)]) return error("dim " + std::to_string(d) + " appears twice in " + dims_str(*dims));
        reduced[static_cast<size_t>(*nd)] = true;
      }
    }
  } else {
    std::fill(reduced.begin(), reduced.end(), true);
  }
  DType dt = x.dtype;
  if (op == OpId::Sum || op == OpId::Prod) {
    if (!is_floating(dt)) dt = DType::Int64;
  } else if (op == OpId::Mean || op == OpId::Var || op == OpId::Logsumexp) {
    if (!require_floating(0)) return std::nullopt;
  } else if (op == OpId::Argmax) {
    if (x.dtype == DType::Bool) return error("is not defined for bool tensors");
    dt = DType::Int64;
  } else if (op == OpId::Amax || op == OpId::Amin) {
    // Reducing a size-0 dim has no identity for max/min; ATen raises at run time.
    for (int64_t i = 0; i < rank; ++i)
      if (reduced[static_cast<size_t>(i)] && g_.dims.min_of(x.shape[static_cast<size_t>(i)]) == 0)
        return error("cannot reduce dim " + std::to_string(i) + " of size " + x.shape[static_cast<size_t>(i)].str() +
                     ", which can be 0");
  }
  if (op == OpId::Argmax && all && !keepdim) return ValueType::tensor(dt, {});
  SymShape out;
  for (int64_t i = 0; i < rank; ++i) {
    if (!reduced[static_cast<size_t>(i)]) out.push_back(x.shape[static_cast<size_t>(i)]);
    else if (keepdim) out.push_back(1);
  }
  return ValueType::tensor(dt, out);
}

std::optional<ValueType> Inferrer::normalization() {
  if (!check_arg_kinds() || !require_floating(0)) return std::nullopt;
  const ValueType& x = tensor(0);
  int64_t rank = static_cast<int64_t>(x.rank());
  if (n_.op == OpId::Softmax || n_.op == OpId::LogSoftmax) {
    if (!dim_in_range(n_.attr_int("dim", -1), rank)) return std::nullopt;
    return x;
  }
  if (n_.op == OpId::LayerNorm) {
    SymShape ns = *n_.attr_shape("normalized_shape");
    if (ns.size() > x.rank())
      return error("normalized_shape " + shape_str(ns) + " has more dims than the input " + shape_str(x.shape));
    for (size_t i = 0; i < ns.size(); ++i) {
      const DimExpr& xd = x.shape[x.rank() - ns.size() + i];
      if (!dims_equal(xd, ns[i], "normalized_shape " + shape_str(ns) + " must match the input's trailing dims " + shape_str(x.shape),
                      "normalized_shape lists the last dims of the input"))
        return std::nullopt;
    }
    for (size_t i = 1; i < n_.args.size(); ++i) {
      if (!same_dtype(0, i)) return std::nullopt;
      const SymShape& ws = tensor(i).shape;
      bool ok = ws.size() == ns.size();
      for (size_t k = 0; ok && k < ns.size(); ++k) ok = g_.dims.equal(ws[k], ns[k]) == Truth::Always;
      if (!ok)
        return error((i == 1 ? "weight" : "bias") + std::string(" has shape ") + shape_str(ws) + ", expected normalized_shape " +
                     shape_str(ns));
    }
    if (n_.attr_float("eps", 1e-5) <= 0) return error("eps must be positive");
    return x;
  }
  // batch_norm(input, weight, bias, running_mean, running_var)
  if (rank < 2) return error("needs an input with at least 2 dims ([N, C, ...]), got " + shape_str(x.shape));
  const DimExpr& c = x.shape[1];
  const char* names[] = {"", "weight", "bias", "running_mean", "running_var"};
  for (size_t i = 1; i < 5; ++i) {
    if (!same_dtype(0, i)) return std::nullopt;
    const SymShape& s = tensor(i).shape;
    if (s.size() != 1 || g_.dims.equal(s[0], c) != Truth::Always)
      return error(std::string(names[i]) + " has shape " + shape_str(s) + ", expected [" + c.str() + "] (the input's dim 1)");
  }
  if (n_.attr_bool("training", false)) {
    for (size_t i = 3; i < 5; ++i) {
      ValueId v = n_.args[i].value;
      bool is_param = false;
      for (const auto& in : g_.inputs)
        if (in.value == v && in.role == GraphInput::Role::Param) is_param = true;
      if (!is_param)
        return error(std::string(names[i]) + " must be a param when training is true (its running stats are updated)",
                     "declare " + g_.name_of(v) + " under params:");
    }
  }
  return x;
}

std::optional<ValueType> Inferrer::matmul_like() {
  if (!same_floating_operands()) return std::nullopt;
  const SymShape& a = tensor(0).shape;
  const SymShape& b = tensor(1).shape;
  const std::string inner_hint = "the last dim of the first operand must equal the second-to-last dim of the second (" +
                                 shape_str(a) + " @ " + shape_str(b) + ")";
  if (n_.op == OpId::Bmm) {
    if (a.size() != 3 || b.size() != 3)
      return error("needs two 3-d tensors, got " + shape_str(a) + " and " + shape_str(b), "use matmul for other ranks");
    if (!dims_equal(a[0], b[0], "batch sizes differ", "both operands need the same dim 0")) return std::nullopt;
    if (!dims_equal(a[2], b[1], "inner dimensions differ", inner_hint)) return std::nullopt;
    return ValueType::tensor(tensor(0).dtype, {a[0], a[1], b[2]});
  }
  if (n_.op == OpId::Linear) {
    if (a.empty() || b.size() != 2)
      return error("needs input [..., in_features] and weight [out_features, in_features], got " + shape_str(a) +
                   " and " + shape_str(b));
    if (!dims_equal(a.back(), b[1], "in_features differ",
                    "weight is [out_features, in_features]: its dim 1 must equal the input's last dim"))
      return std::nullopt;
    if (n_.args.size() == 3) {
      const SymShape& bias = tensor(2).shape;
      if (bias.size() != 1 || g_.dims.equal(bias[0], b[0]) != Truth::Always)
        return error("bias has shape " + shape_str(bias) + ", expected [" + b[0].str() + "] (out_features)");
    }
    SymShape out(a.begin(), a.end() - 1);
    out.push_back(b[0]);
    return ValueType::tensor(tensor(0).dtype, out);
  }
  // matmul: torch.matmul's rank cases.
  if (a.empty() || b.empty()) return error("needs tensors with at least 1 dim, got " + shape_str(a) + " and " + shape_str(b));
  const DimExpr& ak = a.back();
  const DimExpr& bk = b.size() == 1 ? b[0] : b[b.size() - 2];
  if (!dims_equal(ak, bk, "inner dimensions differ", inner_hint)) return std::nullopt;
  if (a.size() == 1 && b.size() == 1) return ValueType::tensor(tensor(0).dtype, {});
  SymShape a_batch(a.begin(), a.end() - std::min<size_t>(a.size(), 2));
  SymShape b_batch(b.begin(), b.end() - std::min<size_t>(b.size(), 2));
  std::string conflict;
  auto batch = broadcast_shapes(g_.dims, a_batch, b_batch, &conflict);
  if (!batch) return error("batch dims " + shape_str(a_batch) + " and " + shape_str(b_batch) + " do not broadcast (" + conflict + ")");
  SymShape out = *batch;
  if (a.size() >= 2) out.push_back(a[a.size() - 2]);
  if (b.size() >= 2) out.push_back(b.back());
  return ValueType::tensor(tensor(0).dtype, out);
}

std::optional<ValueType> Inferrer::conv2d() {
  if (!same_floating_operands()) return std::nullopt;
  const SymShape& x = tensor(0).shape;
  const SymShape& w = tensor(1).shape;
  if (x.size() != 4 && x.size() != 3) return error("input must be [N, C, H, W] or [C, H, W], got " + shape_str(x));
  if (w.size() != 4) return error("weight must be [out_channels, in_channels/groups, kH, kW], got " + shape_str(w));
  int64_t groups = n_.attr_int("groups", 1);
  if (groups < 1) return error("groups must be at least 1");
  size_t c_axis = x.size() - 3;
  if (!dims_equal(x[c_axis], w[1] * groups, "input channels differ from weight's in_channels*groups",
                  "weight is [out_channels, in_channels/groups, kH, kW]"))
    return std::nullopt;
  if (!w[0].is_const() || w[0].value() % groups != 0)
    return error("out_channels (" + w[0].str() + ") must be a multiple of groups (" + std::to_string(groups) + ")");
  if (n_.args.size() == 3) {
    const SymShape& bias = tensor(2).shape;
    if (bias.size() != 1 || g_.dims.equal(bias[0], w[0]) != Truth::Always)
      return error("bias has shape " + shape_str(bias) + ", expected [" + w[0].str() + "]");
  }
  auto pair = [&](const char* name, int64_t fallback) {
    auto v = n_.attr_int_list(name).value_or(std::vector<int64_t>{fallback});
    if (v.size() == 1) v.push_back(v[0]);
    return v;
  };
  auto stride = pair("stride", 1), padding = pair("padding", 0), dilation = pair("dilation", 1);
  for (int k = 0; k < 2; ++k) {
    if (stride[k] < 1 || dilation[k] < 1 || padding[k] < 0) return error("stride and dilation must be >= 1 and padding >= 0");
  }
  SymShape out(x.begin(), x.begin() + static_cast<long>(c_axis));
  out.push_back(w[0]);
  for (int k = 0; k < 2; ++k) {
    const DimExpr& in = x[c_axis + 1 + static_cast<size_t>(k)];
    DimExpr span = in + 2 * padding[k] - dilation[k] * (w[2 + static_cast<size_t>(k)] - 1) - 1;
    DimExpr o = floordiv(span, stride[k]) + 1;
    if (g_.dims.min_of(o) < 1)
      return error("the kernel (" + w[2 + static_cast<size_t>(k)].str() + ") is larger than the padded input (" + in.str() + ")",
                   "pad the input or use a smaller kernel");
    out.push_back(o);
  }
  return ValueType::tensor(tensor(0).dtype, out);
}

// ATen's pooling_output_shape: the window positions that start inside the padded input; with
// ceil_mode a last, partial window, unless it would start in the right padding.
std::optional<ValueType> Inferrer::pool2d() {
  if (!check_arg_kinds() || !require_floating(0)) return std::nullopt;
  const SymShape& x = tensor(0).shape;
  if (x.size() != 4 && x.size() != 3) return error("input must be [N, C, H, W] or [C, H, W], got " + shape_str(x));
  auto pair = [&](const char* name, std::vector<int64_t> fallback) {
    auto v = n_.attr_int_list(name).value_or(fallback);
    if (v.empty()) v = fallback;  // a traced stride=[]: the kernel size
    if (v.size() == 1) v.push_back(v[0]);
    return v;
  };
  auto kernel = pair("kernel_size", {1});
  auto stride = pair("stride", kernel), padding = pair("padding", {0}), dilation = pair("dilation", {1});
  if (kernel.size() != 2 || stride.size() != 2 || padding.size() != 2 || dilation.size() != 2)
    return error("kernel_size, stride, padding and dilation take one int or two");
  const bool ceil_mode = n_.attr_bool("ceil_mode", false);
  if (auto d = n_.attr_int_list("divisor_override"); d && (d->size() != 1 || (*d)[0] == 0))
    return error("divisor_override must be a non-zero int");
  SymShape out(x.begin(), x.end() - 2);
  for (size_t k = 0; k < 2; ++k) {
    if (kernel[k] < 1 || stride[k] < 1 || dilation[k] < 1 || padding[k] < 0)
      return error("kernel_size, stride and dilation must be >= 1 and padding >= 0");
    const int64_t extent = dilation[k] * (kernel[k] - 1) + 1;
    if (padding[k] > (n_.op == OpId::MaxPool2d ? extent : kernel[k]) / 2)
      return error("padding (" + std::to_string(padding[k]) + ") must be at most half the kernel size (" +
                   std::to_string(n_.op == OpId::MaxPool2d ? extent : kernel[k]) + ")",
                   "PyTorch requires it too; pad the input with a separate op for more");
    const DimExpr& in = x[x.size() - 2 + k];
    DimExpr span = in + 2 * padding[k] - extent;
    if (g_.dims.min_of(span) < 0)
      return error("the kernel (" + std::to_string(extent) + ") is larger than the padded input (" + in.str() + ")",
                   "pad the input or use a smaller kernel");
    DimExpr o = floordiv(span + (ceil_mode ? stride[k] - 1 : 0), stride[k]) + 1;
    if (ceil_mode && stride[k] > 1) {
      if (!in.is_const()) return error("ceil_mode needs constant H and W", "import or write the model with fixed sizes");
      if ((o.value() - 1) * stride[k] >= in.value() + padding[k]) o = o.value() - 1;
    }
    out.push_back(o);
  }
  return ValueType::tensor(tensor(0).dtype, out);
}

// ATen's adaptive pooling: window i of n over a size s spans [floor(i*s/n), ceil((i+1)*s/n)), so
// every window holds an input element whatever the sizes, and the output is output_size.
std::optional<ValueType> Inferrer::adaptive_pool2d() {
  if (!check_arg_kinds() || !require_floating(0)) return std::nullopt;
  const SymShape& x = tensor(0).shape;
  if (x.size() != 4 && x.size() != 3) return error("input must be [N, C, H, W] or [C, H, W], got " + shape_str(x));
  std::vector<int64_t> size = n_.attr_int_list("output_size").value_or(std::vector<int64_t>{});
  if (size.size() == 1) size.push_back(size[0]);
  if (size.size() != 2 || size[0] < 0 || size[1] < 0) return error("output_size takes one size >= 0 or two");
  for (size_t k = x.size() - 3; k < x.size(); ++k)  // ATen allows an empty batch only
    if (g_.dims.min_of(x[k]) < 1) return error("C, H and W must be non-empty, got " + shape_str(x));
  SymShape out(x.begin(), x.end() - 2);
  out.push_back(size[0]);
  out.push_back(size[1]);
  return ValueType::tensor(tensor(0).dtype, out);
}

// addmm (2-d) and baddbmm (3-d): the product's shape, self broadcast to it (never widening it).
std::optional<ValueType> Inferrer::add_matmul() {
  if (!same_floating_operands()) return std::nullopt;
  const SymShape& a = tensor(1).shape;
  const SymShape& b = tensor(2).shape;
  const size_t rank = n_.op == OpId::Addmm ? 2 : 3;
  if (a.size() != rank || b.size() != rank)
    return error("needs two " + std::to_string(rank) + "-d matrices, got " + shape_str(a) + " and " + shape_str(b));
  if (rank == 3 && !dims_equal(a[0], b[0], "batch sizes differ", "both batches need the same dim 0")) return std::nullopt;
  if (!dims_equal(a[rank - 1], b[rank - 2], "inner dimensions differ",
                  "the last dim of the first matrix must equal the second-to-last dim of the second (" + shape_str(a) +
                      " @ " + shape_str(b) + ")"))
    return std::nullopt;
  SymShape out(a.begin(), a.end() - 1);
  out.push_back(b.back());
  std::string conflict;
  auto shape = broadcast_shapes(g_.dims, tensor(0).shape, out, &conflict);
  bool fits = shape && shape->size() == out.size();
  for (size_t k = 0; fits && k < out.size(); ++k) fits = g_.dims.equal((*shape)[k], out[k]) == Truth::Always;
  if (!fits)
    return error("self " + shape_str(tensor(0).shape) + " does not broadcast to the product's shape " + shape_str(out));
  for (const char* k : {"beta", "alpha"})
    if (auto v = n_.attr_scalar(k); v && v->kind == ScalarKind::Bool)
      return error(std::string(k) + " must be a number, got a bool");
  return ValueType::tensor(tensor(0).dtype, out);
}

// Rows of weight picked by indices: indices.shape + [dim], in weight's dtype.
std::optional<ValueType> Inferrer::embedding() {
  if (!check_arg_kinds()) return std::nullopt;
  const ValueType& weight = tensor(0);
  const ValueType& indices = tensor(1);
  if (weight.shape.size() != 2) return error("weight must be [num_embeddings, embedding_dim], got " + shape_str(weight.shape));
  if (indices.dtype != DType::Int64 && indices.dtype != DType::Int32)
    return error("indices must be int64 or int32, got " + std::string(dtype_name(indices.dtype)));
  SymShape out = indices.shape;
  out.push_back(weight.shape[1]);
  return ValueType::tensor(weight.dtype, out);
}

std::optional<ValueType> Inferrer::view() {
  if (!check_arg_kinds()) return std::nullopt;
  const ValueType& x = tensor(0);
  const SymShape& s = x.shape;
  int64_t rank = static_cast<int64_t>(s.size());
  const OpId op = n_.op;
  if (op == OpId::Reshape) {
    SymShape target = *n_.attr_shape("shape");
    int infer_at = -1;
    DimExpr known = 1;
    for (size_t i = 0; i < target.size(); ++i) {
      if (target[i].is_const() && target[i].value() == -1) {
        if (infer_at >= 0) return error("only one dim of shape may be -1, got " + shape_str(target));
        infer_at = static_cast<int>(i);
      } else if (target[i].is_const() && target[i].value() < 0) {
        return error("invalid size " + target[i].str() + " in shape " + shape_str(target));
      } else {
        known = known * target[i];
      }
    }
    DimExpr total = numel(s);
    if (infer_at >= 0) {
      // Every binding must divide evenly.
      for (const auto& b : g_.dims.samples()) {
        auto t = total.eval(b), k = known.eval(b);
        if (t && k && (*k == 0 || *t % *k != 0))
          return error("shape " + shape_str(target) + " cannot hold " + total.str() + " elements",
                       "the product of the given sizes must divide the input's element count");
      }
      target[static_cast<size_t>(infer_at)] = floordiv(total, known);
      return ValueType::tensor(x.dtype, target);
    }
    if (!dims_equal(total, known, "shape " + shape_str(target) + " holds a different number of elements than " + shape_str(s),
                    "reshape keeps the element count; use -1 for one dim to infer it"))
      return std::nullopt;
    return ValueType::tensor(x.dtype, target);
  }
  if (op == OpId::Permute) {
    auto dims = *n_.attr_int_list("dims");
    if (static_cast<int64_t>(dims.size()) != rank)
      return error("dims " + dims_str(dims) + " must list each of the " + std::to_string(rank) + " dims once");
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    SymShape out;
    for (int64_t d : dims) {
      auto nd = dim_in_range(d, rank);
      if (!nd) return std::nullopt;
      if (seen[static_cast<size_t>(*nd)]) return error("dims " + dims_str(dims) + " is not a permutation (dim " + std::to_string(d) + " twice)");
      seen[static_cast<size_t>(*nd)] = true;
      out.push_back(s[static_cast<size_t>(*nd)]);
    }
    return ValueType::tensor(x.dtype, out);
  }
  if (op == OpId::Transpose) {
    auto d0 = dim_in_range(n_.attr_int("dim0", 0), rank, "dim0");
    if (!d0) return std::nullopt;
    auto d1 = dim_in_range(n_.attr_int("dim1", 0), rank, "dim1");
    if (!d1) return std::nullopt;
    SymShape out = s;
    if (rank > 0) std::swap(out[static_cast<size_t>(*d0)], out[static_cast<size_t>(*d1)]);
    return ValueType::tensor(x.dtype, out);
  }
  if (op == OpId::Expand) {
    SymShape size = *n_.attr_shape("size");
    if (size.size() < s.size())
      return error("size " + shape_str(size) + " has fewer dims than the input " + shape_str(s));
    size_t lead = size.size() - s.size();
    SymShape out;
    for (size_t i = 0; i < size.size(); ++i) {
      bool keep = size[i].is_const() && size[i].value() == -1;
      if (i < lead) {
        if (keep) return error("-1 is not allowed for a new leading dim in " + shape_str(size));
        out.push_back(size[i]);
        continue;
      }
      const DimExpr& in = s[i - lead];
      if (keep || g_.dims.equal(in, size[i]) == Truth::Always) {
        out.push_back(in);
      } else if (g_.dims.equal(in, 1) == Truth::Always) {
        out.push_back(size[i]);
      } else {
        return error("cannot expand dim " + std::to_string(i - lead) + " of size " + in.str() + " to " + size[i].str(),
                     "only size-1 dims can be expanded");
      }
    }
    return ValueType::tensor(x.dtype, out);
  }
  if (op == OpId::Squeeze) {
    SymShape out;
    if (n_.has_attr("dim")) {
      auto d = dim_in_range(n_.attr_int("dim", 0), rank);
      if (!d) return std::nullopt;
      for (int64_t i = 0; i < rank; ++i) {
        const DimExpr& e = s[static_cast<size_t>(i)];
        if (i == *d) {
          Truth one = g_.dims.equal(e, 1);
          if (one == Truth::Sometimes)
            return error("dim " + std::to_string(*d) + " has size " + e.str() + ", which is 1 only for some dim values",
                         "squeeze would change the rank depending on the input; use reshape");
          if (one == Truth::Always) continue;
        }
        out.push_back(e);
      }
    } else {
      for (const auto& e : s) {
        Truth one = g_.dims.equal(e, 1);
        if (one == Truth::Sometimes)
          return error("size " + e.str() + " is 1 only for some dim values, so the result's rank would vary",
                       "give dim: to squeeze one known size-1 dim");
        if (one != Truth::Always) out.push_back(e);
      }
    }
    return ValueType::tensor(x.dtype, out);
  }
  if (op == OpId::Unsqueeze) {
    auto d = dim_in_range(n_.attr_int("dim", 0), rank + 1);
    if (!d) return std::nullopt;
    SymShape out = s;
    out.insert(out.begin() + *d, DimExpr(1));
    return ValueType::tensor(x.dtype, out);
  }
  if (op == OpId::Slice) {
    if (rank == 0) return error("cannot slice a 0-d tensor");
    auto d = dim_in_range(n_.attr_int("dim", 0), rank);
    if (!d) return std::nullopt;
    int64_t step = n_.attr_int("step", 1);
    if (step < 1) return error("step must be positive, got " + std::to_string(step));
    const DimExpr& size = s[static_cast<size_t>(*d)];
    auto clamp_index = [&](int64_t v) -> DimExpr {
      if (v >= 0) return min(DimExpr(v), size);
      return max(size + v, 0);
    };
    DimExpr start = clamp_index(n_.attr_int("start", 0));
    DimExpr end = n_.has_attr("end") ? clamp_index(n_.attr_int("end", 0)) : size;
    SymShape out = s;
    out[static_cast<size_t>(*d)] = max(ceildiv(end - start, step), 0);
    return ValueType::tensor(x.dtype, out);
  }
  // flatten
  if (rank == 0) return ValueType::tensor(x.dtype, {1});
  auto sd = dim_in_range(n_.attr_int("start_dim", 0), rank, "start_dim");
  if (!sd) return std::nullopt;
  auto ed = dim_in_range(n_.attr_int("end_dim", -1), rank, "end_dim");
  if (!ed) return std::nullopt;
  if (*sd > *ed) return error("start_dim (" + std::to_string(*sd) + ") comes after end_dim (" + std::to_string(*ed) + ")");
  SymShape out(s.begin(), s.begin() + *sd);
  DimExpr merged = 1;
  for (int64_t i = *sd; i <= *ed; ++i) merged = merged * s[static_cast<size_t>(i)];
  out.push_back(merged);
  out.insert(out.end(), s.begin() + *ed + 1, s.end());
  return ValueType::tensor(x.dtype, out);
}

std::optional<ValueType> Inferrer::cat() {
  if (!check_arg_kinds()) return std::nullopt;
  const SymShape& first = tensor(0).shape;
  int64_t rank = static_cast<int64_t>(first.size());
  if (rank == 0) return error("cannot concatenate 0-d tensors", "unsqueeze them first");
  auto d = dim_in_range(n_.attr_int("dim", 0), rank);
  if (!d) return std::nullopt;
  SymShape out = first;
  std::vector<PromotionOperand> ops;
  for (size_t i = 0; i < n_.args.size(); ++i) {
    const SymShape& s = tensor(i).shape;
    ops.push_back(operand(i));
    if (static_cast<int64_t>(s.size()) != rank)
      return error("all tensors need the same rank: " + arg_name(0) + " is " + shape_str(first) + ", " + arg_name(i) +
                   " is " + shape_str(s));
    if (i == 0) continue;
    for (int64_t k = 0; k < rank; ++k) {
      if (k == *d) continue;
      if (!dims_equal(first[static_cast<size_t>(k)], s[static_cast<size_t>(k)],
                      "sizes differ in dim " + std::to_string(k) + " between " + arg_name(0) + " and " + arg_name(i),
                      "all dims but the cat dim must match"))
        return std::nullopt;
    }
    out[static_cast<size_t>(*d)] = out[static_cast<size_t>(*d)] + s[static_cast<size_t>(*d)];
  }
  return ValueType::tensor(result_type(ops), out);
}

std::optional<ValueType> Inferrer::full() {
  SymShape shape = *n_.attr_shape("shape");
  for (const auto& dim : shape)
    if (dim.is_const() && dim.value() < 0) return error("negative size in shape " + shape_str(shape));
  Scalar value = *n_.attr_scalar("value");
  DType dt = n_.attr_dtype("dtype").value_or(scalar_kind_default_dtype(value.kind));
  if (value.kind == ScalarKind::Float && !is_floating(dt))
    return error("value " + value.str() + " is a float but dtype is " + std::string(dtype_name(dt)));
  return ValueType::tensor(dt, shape);
}

std::optional<ValueType> Inferrer::item() {
  if (!check_arg_kinds()) return std::nullopt;
  const ValueType& x = tensor(0);
  if (g_.dims.equal(numel(x.shape), 1) != Truth::Always)
    return error("needs a one-element tensor, got " + shape_str(x.shape),
                 "reduce first (e.g. {op: sum}) or slice one element");
  return ValueType::scalar(scalar_kind_of(x.dtype));
}

std::optional<ValueType> Inferrer::if_node() {
  if (!is_number(0)) {
    const ValueType& p = tensor(0);
    if (g_.dims.equal(numel(p.shape), 1) != Truth::Always)
      return error("the condition must have one element, got " + shape_str(p.shape),
                   "reduce it first, e.g. {op: gt, args: [{sum}, 0]}");
  }
  GBC_INTERNAL_ASSERT(n_.blocks.size() == 2, "if without two blocks");
  const Block& then_b = n_.blocks[0];
  const Block& else_b = n_.blocks[1];
  if (then_b.results.size() != 1 || else_b.results.size() != 1) return std::nullopt;  // frontend reported
  const ValueType& t = g_.type(then_b.results[0]);
  const ValueType& e = g_.type(else_b.results[0]);
  if (!t.known() || !e.known()) return std::nullopt;
  if (t.kind != e.kind || t.dtype != e.dtype || t.rank() != e.rank())
    return error("the branches give different types for '" + n_.attr_string("result", "") + "': " + t.str() + " and " + e.str(),
                 "both branches must produce the same dtype and shape");
  for (size_t i = 0; i < t.rank(); ++i)
    if (!dims_equal(t.shape[i], e.shape[i], "the branches give different shapes " + shape_str(t.shape) + " and " + shape_str(e.shape),
                    "both branches must produce the same dtype and shape"))
      return std::nullopt;
  return t;
}

std::optional<ValueType> Inferrer::nonzero() {
  if (!check_arg_kinds()) return std::nullopt;
  const ValueType& x = tensor(0);
  // Re-inference after a pass keeps the dim declared the first time.
  if (!n_.outputs.empty() && g_.type(n_.outputs[0]).is_tensor()) return g_.type(n_.outputs[0]);
  // A data-dependent size: a new dim whose range is what the count can be (torch's unbacked u0).
  std::string sym = "u" + std::to_string(g_.dims.ranges().size());
  while (g_.dims.has(sym)) sym += "_";
  g_.dims.declare(sym, {0, std::max<int64_t>(0, g_.dims.max_of(numel(x.shape)))});
  return ValueType::tensor(DType::Int64, {DimExpr::symbol(sym), static_cast<int64_t>(x.rank())});
}

std::optional<ValueType> Inferrer::custom() {
  std::string name = n_.attr_string("name", "");
  const CustomKernelInfo* k = find_custom_kernel(name);
  if (!k) {
    std::vector<std::string> names;
    for (const auto& c : custom_kernels()) names.push_back(c.name);
    std::string close = closest_name(name, names);
    std::string all;
    for (const auto& c : names) all += (all.empty() ? "" : ", ") + c;
    return error("no custom kernel named '" + name + "'", close.empty() ? "known kernels: " + all : "did you mean '" + close + "'?");
  }
  if (static_cast<int>(n_.args.size()) != k->num_args)
    return error("kernel '" + name + "' takes " + std::to_string(k->num_args) + " args, got " + std::to_string(n_.args.size()));
  if (!check_arg_kinds() || !require_floating(0)) return std::nullopt;
  if (k->result == CustomKernelInfo::Result::SameAsFirst) return tensor(0);
  auto shape = broadcast_all({0, 1});
  if (!shape) return std::nullopt;
  // Broadcasting kernels compute `x op bias` on ATen, which promotes.
  return ValueType::tensor(result_type({operand(0), operand(1)}), *shape);
}

std::optional<ValueType> Inferrer::in_place() {
  if (is_number(0)) return error("self must be a tensor");
  const ValueType& self = tensor(0);
  auto shape = broadcast_all({0, 1});
  if (!shape) return std::nullopt;
  bool same_shape = shape->size() == self.rank();
  for (size_t i = 0; same_shape && i < self.rank(); ++i) same_shape = g_.dims.equal((*shape)[i], self.shape[i]) == Truth::Always;
  if (!same_shape)
    return error("the result " + shape_str(*shape) + " does not fit in self " + shape_str(self.shape),
                 "an in-place op cannot change self's shape; use the out-of-place op");
  if (n_.op == OpId::CopyInPlace) return self;  // any dtype: copy_ casts src to self's
  DType dt = result_type({operand(0), operand(1)});
  if (promote_types(dt, self.dtype) != self.dtype && !(is_floating(self.dtype) && is_floating(dt)))
    return error("result type " + std::string(dtype_name(dt)) + " cannot be stored in self of type " +
                 std::string(dtype_name(self.dtype)),
                 "use the out-of-place op, or cast self first");
  return self;
}

}  // namespace

std::optional<int64_t> normalize_dim(int64_t dim, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);  // a 0-d tensor accepts dim 0 and -1
  if (dim < -r || dim >= r) return std::nullopt;
  return dim < 0 ? dim + r : dim;
}

std::optional<SymShape> broadcast_shapes(const DimSpace& dims, const SymShape& a, const SymShape& b, std::string* conflict) {
  size_t n = std::max(a.size(), b.size());
  SymShape out(n);
  for (size_t i = 0; i < n; ++i) {
    bool has_a = i < a.size(), has_b = i < b.size();
    if (!has_a) { out[n - 1 - i] = b[b.size() - 1 - i]; continue; }
    if (!has_b) { out[n - 1 - i] = a[a.size() - 1 - i]; continue; }
    const DimExpr& x = a[a.size() - 1 - i];
    const DimExpr& y = b[b.size() - 1 - i];
    if (x.same_as(y) || dims.equal(x, y) == Truth::Always) { out[n - 1 - i] = x; continue; }
    if (dims.equal(x, 1) == Truth::Always) { out[n - 1 - i] = y; continue; }
    if (dims.equal(y, 1) == Truth::Always) { out[n - 1 - i] = x; continue; }
    // Valid only if, for every binding, the sizes agree or one of them is 1.
    bool ok = true;
    for (const auto& bind : dims.samples()) {
      auto vx = x.eval(bind), vy = y.eval(bind);
      if (!vx || !vy || !(*vx == *vy || *vx == 1 || *vy == 1)) { ok = false; break; }
    }
    if (!ok) {
      if (conflict) *conflict = x.str() + " vs " + y.str();
      return std::nullopt;
    }
    out[n - 1 - i] = max(x, y);
  }
  return out;
}

bool infer_node_types(Graph& graph, Node& node, Diagnostics& diags) { return Inferrer(graph, node, diags).run(); }

}  // namespace gbc
