// IR -> TorchScript source (see torchscript_emitter.h). Every statement is a plain torch.* call so
// that the TorchScript graph holds the same aten ops the eager reference calls, and NNC sees the
// op mix the model describes rather than a rewrite of it.
#include "compiler/backends/torchscript_emitter.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "compiler/ir/generic_op.h"
#include "compiler/ir/op_schema.h"
#include "compiler/ir/schema_string.h"

namespace gbc {
namespace {

// Names a model id must not take: Python keywords and the globals TorchScript resolves by name.
const std::set<std::string>& reserved_names() {
  static const std::set<std::string> names = {
      // Python keywords
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
      "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
      "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
      // TorchScript builtins, types and modules
      "torch", "Tensor", "Tuple", "List", "Dict", "Optional", "Union", "Any", "NamedTuple", "Future", "Await",
      "annotate", "isinstance", "unchecked_cast", "print", "len", "float", "int", "bool", "str", "complex", "min",
      "max", "abs", "round", "range", "list", "tuple", "dict", "sum", "any", "all", "sorted", "enumerate", "zip",
      "divmod", "hash", "hex", "oct", "bin", "chr", "ord", "getattr", "hasattr", "iter", "next", "slice", "super",
      "type", "object", "math", "fork", "wait", "device", "ops", "self", "forward", "gbcheck"};
  return names;
}

bool is_number_arg(const Graph& g, const Arg& a) { return !a.is_value() || g.type(a.value).is_scalar(); }

ScalarKind number_kind(const Graph& g, const Arg& a) {
  return a.is_value() ? g.type(a.value).scalar_kind : a.scalar.kind;
}

PromotionOperand promotion_operand(const Graph& g, const Arg& a) {
  if (is_number_arg(g, a)) return {PromotionOperand::Rank::Number, scalar_kind_default_dtype(number_kind(g, a))};
  const ValueType& t = g.type(a.value);
  return {t.rank() ? PromotionOperand::Rank::Dimensioned : PromotionOperand::Rank::ZeroDim, t.dtype};
}

std::string join(const std::vector<std::string>& parts, const std::string& sep = ", ") {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? sep : "") + parts[i];
  return s;
}

std::string int_list(const std::vector<int64_t>& values) {
  std::vector<std::string> parts;
  for (int64_t v : values) parts.push_back(torchscript_int_literal(v));
  return "[" + join(parts) + "]";
}

std::string py_bool(bool b) { return b ? "True" : "False"; }

class Emitter {
 public:
  Emitter(const Graph& graph, const TorchScriptOptions& options) : g_(graph), opt_(options) {
    names_.resize(g_.values.size());
  }

  TorchScriptProgram run() {
    dim_scopes_.emplace_back();
    std::vector<std::string> params;
    for (const auto& in : g_.inputs) {
      const std::string& name = define(in.value);
      params.push_back(name + ": Tensor");
      out_.input_names.push_back(name);
    }
    // A dim is read from the first input that declares it as a plain symbol (what bind_dims binds).
    for (const auto& in : g_.inputs) {
      const ValueType& t = g_.type(in.value);
      for (size_t k = 0; k < t.shape.size(); ++k) {
        const DimExpr& d = t.shape[k];
        if (d.is_symbol() && !dim_scopes_.back().count(d.name()))
          dim_scopes_.back()[d.name()] = ref(in.value) + ".size(" + std::to_string(k) + ")";
      }
    }
    std::vector<std::string> result_types(g_.outputs.size(), "Tensor");
    line(0, "def forward(" + join(params) + ") -> Tuple[" + join(result_types) + "]:", nullptr);
    emit_block(g_.body, 1);
    std::vector<std::string> results;
    for (ValueId v : g_.outputs) results.push_back(ref(v));
    line(1, "return (" + join(results) + (results.size() == 1 ? ",)" : ")"), nullptr);
    return std::move(out_);
  }

 private:
  // ---- names ----

  std::string mangle(const std::string& raw) {
    std::string s;
    for (char c : raw) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) || reserved_names().count(s) ||
        s.rfind("__", 0) == 0)
      s = "v_" + s;
    std::string unique = s;
    for (int k = 1; used_.count(unique); ++k) unique = s + "_" + std::to_string(k);
    used_.insert(unique);
    return unique;
  }

  const std::string& define(ValueId v) {
    names_[static_cast<size_t>(v)] = mangle(g_.name_of(v));
    out_.identifiers[g_.name_of(v)] = names_[static_cast<size_t>(v)];
    return names_[static_cast<size_t>(v)];
  }

  const std::string& ref(ValueId v) const {
    const std::string& n = names_.at(static_cast<size_t>(v));
    if (n.empty()) internal_error("torchscript: '" + g_.name_of(v) + "' is used before it is defined");
    return n;
  }

  // ---- output ----

  void line(int indent, const std::string& text, const Node* origin) {
    out_.source += std::string(static_cast<size_t>(indent) * 4, ' ') + text + "\n";
    TorchScriptLine l;
    if (origin) {
      l.loc = origin->loc;
      l.op = op_name(origin->op);
    }
    out_.lines.push_back(std::move(l));
  }

  void assign(int indent, const Node& n, const std::string& expr) {
    line(indent, (n.outputs.empty() ? "" : define(n.output()) + " = ") + expr, &n);
  }

  // ---- operands ----

  std::string number_literal(const Scalar& s) const {
    switch (s.kind) {
      case ScalarKind::Bool: return py_bool(s.b);
      case ScalarKind::Int: return torchscript_int_literal(s.i);
      case ScalarKind::Float: return torchscript_float_literal(s.f);
    }
    return "0";
  }

  // A value's name, or the literal of a number written in the model.
  std::string operand(const Arg& a) const { return a.is_value() ? ref(a.value) : number_literal(a.scalar); }

  // A number as a 0-d tensor of `dtype`: for ops with no Scalar overload (and for bools, which
  // TorchScript does not accept as a Scalar). With `dtype` the promoted type of the op, the 0-d
  // tensor promotes to the same result as ATen's wrapped number, and holds the same value after
  // the cast to the common dtype that ATen applies to the wrapped number.
  std::string number_tensor(const Arg& a, DType dtype) const {
    return "torch.tensor(" + operand(a) + ", dtype=" + std::to_string(torchscript_dtype_code(dtype)) +
           ", device=" + device() + ")";
  }

  std::string device() const { return "torch.device(" + torchscript_string_literal(opt_.device) + ")"; }

  std::string dtype_arg(DType dtype) const { return std::to_string(torchscript_dtype_code(dtype)); }

  // ---- symbolic sizes ----

  static bool is_atom(const DimExpr& e) {
    return (e.is_const() && e.value() >= 0) || e.is_symbol() || e.op() == DimExpr::Op::Min ||
           e.op() == DimExpr::Op::Max;
  }

  std::string dim_child(const DimExpr& e, const Node& n) const {
    std::string s = dim_expr(e, n);
    return is_atom(e) ? s : "(" + s + ")";
  }

  std::string dim_expr(const DimExpr& e, const Node& n) const {
    using Op = DimExpr::Op;
    switch (e.op()) {
      case Op::Const: return torchscript_int_literal(e.value());
      case Op::Sym: {
        for (auto s = dim_scopes_.rbegin(); s != dim_scopes_.rend(); ++s)
          if (auto it = s->find(e.name()); it != s->end()) return it->second;
        throw TorchScriptEmitError(n, "dim '" + e.name() + "' is not a dim of any input, so its size is unknown at run time");
      }
      case Op::Add: return dim_child(e.lhs(), n) + " + " + dim_child(e.rhs(), n);
      case Op::Sub: return dim_child(e.lhs(), n) + " - " + dim_child(e.rhs(), n);
      case Op::Mul: return dim_child(e.lhs(), n) + " * " + dim_child(e.rhs(), n);
      case Op::FloorDiv: return dim_child(e.lhs(), n) + " // " + dim_child(e.rhs(), n);
      // ceil(a / b) == -((-a) // b) in Python's floor-dividing int arithmetic.
      case Op::CeilDiv: return "-(-" + dim_child(e.lhs(), n) + " // " + dim_child(e.rhs(), n) + ")";
      case Op::Min: return "min(" + dim_expr(e.lhs(), n) + ", " + dim_expr(e.rhs(), n) + ")";
      case Op::Max: return "max(" + dim_expr(e.lhs(), n) + ", " + dim_expr(e.rhs(), n) + ")";
    }
    return "0";
  }

  std::string shape(const SymShape& s, const Node& n) const {
    std::vector<std::string> parts;
    for (const auto& d : s) parts.push_back(dim_expr(d, n));
    return "[" + join(parts) + "]";
  }

  // ---- blocks ----

  void emit_block(const Block& block, int indent) {
    size_t lines_before = out_.lines.size();
    for (const auto& n : block.nodes) emit_node(n, indent);
    if (out_.lines.size() == lines_before) line(indent, "pass", nullptr);
  }

  void emit_node(const Node& n, int indent) {
    const OpSchema* schema = find_op_schema(n.op);
    if (!schema) internal_error("torchscript: no schema for op '" + op_name(n.op) + "'");
    const OpId op = n.op;
    auto arg = [&](size_t i) { return operand(n.args.at(i)); };
    switch (schema->cls) {
      case OpClass::Unary:
        if (op == OpId::Gelu)
          return assign(indent, n, "torch.gelu(" + arg(0) + ", approximate=" +
                                       torchscript_string_literal(n.attr_string("approximate", "none")) + ")");
        // Like F.hardswish, TorchScript reaches the two in torch._C._nn only.
        if (op == OpId::Hardswish || op == OpId::Hardsigmoid)
          return assign(indent, n, "torch._C._nn." + op_name(op) + "(" + arg(0) + ")");
        return assign(indent, n, "torch." + op_name(op) + "(" + arg(0) + ")");
      case OpClass::Binary: return assign(indent, n, binary(n));
      case OpClass::Where: {
        DType dt = result_type({promotion_operand(g_, n.args[1]), promotion_operand(g_, n.args[2])});
        return assign(indent, n, "torch.where(" + arg(0) + ", " + tensor_operand(n.args[1], dt) + ", " +
                                     tensor_operand(n.args[2], dt) + ")");
      }
      case OpClass::Clamp: {
        std::string s = "torch.clamp(" + arg(0);
        for (const char* bound : {"min", "max"})
          if (auto v = n.attr_scalar(bound)) s += std::string(", ") + bound + "=" + scalar_arg_literal(*v);
        return assign(indent, n, s + ")");
      }
      case OpClass::Cast: return assign(indent, n, arg(0) + ".to(" + dtype_arg(*n.attr_dtype("dtype")) + ")");
      case OpClass::Reduction: return assign(indent, n, reduction(n));
      case OpClass::Normalization: return assign(indent, n, normalization(n));
      case OpClass::Extern: return is_generic_op(n) ? generic_call(indent, n) : assign(indent, n, extern_call(n));
      case OpClass::View: return assign(indent, n, view(n));
      case OpClass::Cat: {
        std::vector<std::string> parts;
        for (size_t i = 0; i < n.args.size(); ++i) parts.push_back(arg(i));
        return assign(indent, n, "torch.cat([" + join(parts) + "], " + std::to_string(n.attr_int("dim", 0)) + ")");
      }
      case OpClass::Creation: {
        // The dtype is always written: TorchScript's full infers it from the value like eager, but
        // a bool value is not a Scalar there, so it is written as 0/1 and needs the explicit dtype.
        Scalar v = *n.attr_scalar("value");
        DType dt = g_.type(n.output()).dtype;
        return assign(indent, n, "torch.full(" + shape(*n.attr_shape("shape"), n) + ", " + scalar_arg_literal(v) +
                                     ", dtype=" + dtype_arg(dt) + ", device=" + device() + ")");
      }
      case OpClass::Random:
        return assign(indent, n, "torch.dropout(" + arg(0) + ", " + torchscript_float_literal(n.attr_float("p", 0.5)) +
                                     ", " + py_bool(n.attr_bool("training", true)) + ")");
      case OpClass::Effect: {
        std::vector<std::string> parts;
        std::string message = n.attr_string("message", "");
        if (!message.empty()) parts.push_back(torchscript_string_literal(message));
        for (size_t i = 0; i < n.args.size(); ++i) parts.push_back(arg(i));
        if (parts.empty()) parts.push_back("''");
        return line(indent, "print(" + join(parts) + ")", &n);
      }
      case OpClass::HostScalar: {
        const char* conv = "float";
        switch (g_.type(n.output()).scalar_kind) {
          case ScalarKind::Bool: conv = "bool"; break;
          case ScalarKind::Int: conv = "int"; break;
          case ScalarKind::Float: conv = "float"; break;
        }
        return assign(indent, n, std::string(conv) + "(" + arg(0) + ".item())");
      }
      case OpClass::Control: return emit_if(n, indent);
      case OpClass::DataDependent: {
        assign(indent, n, "torch.nonzero(" + arg(0) + ")");
        // The count is a data-dependent dim (u0): later shapes read it from the result.
        const ValueType& t = g_.type(n.output());
        if (t.is_tensor() && !t.shape.empty() && t.shape[0].is_symbol())
          dim_scopes_.back()[t.shape[0].name()] = ref(n.output()) + ".size(0)";
        return;
      }
      case OpClass::Custom: {
        std::vector<std::string> parts;
        for (size_t i = 0; i < n.args.size(); ++i) parts.push_back(arg(i));
        return assign(indent, n, "torch.ops.gbcheck." + n.attr_string("name", "") + "(" + join(parts) + ")");
      }
      case OpClass::InPlace: {
        const Arg& other = n.args[1];
        std::string rhs = operand(other);
        if (is_number_arg(g_, other) && number_kind(g_, other) == ScalarKind::Bool)
          rhs = number_tensor(other, result_type({promotion_operand(g_, n.args[0]), promotion_operand(g_, other)}));
        return assign(indent, n, arg(0) + "." + op_name(op) + "(" + rhs + ")");
      }
    }
    internal_error("torchscript: op '" + op_name(op) + "' has no TorchScript form");
  }

  void emit_if(const Node& n, int indent) {
    line(indent, "if bool(" + operand(n.args.at(0)) + "):", &n);
    std::string result = n.outputs.empty() ? "" : define(n.output());
    for (size_t b = 0; b < n.blocks.size(); ++b) {
      if (b == 1) line(indent, "else:", nullptr);
      const Block& block = n.blocks[b];
      // Dims bound inside a branch (by nonzero) are unknown after it.
      dim_scopes_.push_back(dim_scopes_.back());
      size_t lines_before = out_.lines.size();
      for (const auto& inner : block.nodes) emit_node(inner, indent + 1);
      if (!result.empty() && !block.results.empty()) line(indent + 1, result + " = " + ref(block.results[0]), &n);
      if (out_.lines.size() == lines_before) line(indent + 1, "pass", nullptr);
      dim_scopes_.pop_back();
    }
  }

  // ---- op families ----

  // A literal for an attribute taking a Scalar (clamp bounds, full's value). TorchScript's Scalar
  // is int or float, so a bool is written as 0/1, which ATen converts to the same value.
  std::string scalar_arg_literal(const Scalar& s) const {
    if (s.kind == ScalarKind::Bool) return s.b ? "1" : "0";
    return number_literal(s);
  }

  // An operand that must be a tensor (where, maximum, ...).
  std::string tensor_operand(const Arg& a, DType promoted) const {
    return is_number_arg(g_, a) ? number_tensor(a, promoted) : operand(a);
  }

  std::string binary(const Node& n) const {
    static const std::set<OpId> scalar_overload = {OpId::Add, OpId::Sub, OpId::Mul, OpId::Div, OpId::Pow, OpId::Remainder,
                                                   OpId::Eq,  OpId::Ne,  OpId::Lt,  OpId::Le,  OpId::Gt,  OpId::Ge};
    static const std::map<OpId, std::string> mirrored = {{OpId::Add, "add"}, {OpId::Mul, "mul"}, {OpId::Eq, "eq"},
                                                         {OpId::Ne, "ne"},   {OpId::Lt, "gt"},   {OpId::Le, "ge"},
                                                         {OpId::Gt, "lt"},   {OpId::Ge, "le"}};
    const OpId op = n.op;
    const Arg& a = n.args[0];
    const Arg& b = n.args[1];
    bool na = is_number_arg(g_, a), nb = is_number_arg(g_, b);
    DType promoted = result_type({promotion_operand(g_, a), promotion_operand(g_, b)});
    auto call = [&](const std::string& name, const std::string& x, const std::string& y) {
      return "torch." + name + "(" + x + ", " + y + ")";
    };
    if (!na && nb && scalar_overload.count(op) && number_kind(g_, b) != ScalarKind::Bool)
      return call(op_name(op), operand(a), operand(b));
    if (na && !nb && number_kind(g_, a) != ScalarKind::Bool) {
      // ATen's Scalar overloads take the tensor first; these rewrites compute the same values
      // (IEEE add, mul and comparisons are symmetric; rsub, pow.Scalar and remainder.Scalar_Tensor
      // wrap the number exactly as the eager call does).
      if (auto it = mirrored.find(op); it != mirrored.end()) return call(it->second, operand(b), operand(a));
      if (op == OpId::Sub) return call("rsub", operand(b), operand(a));
      if (op == OpId::Pow || op == OpId::Remainder) return call(op_name(op), operand(a), operand(b));
    }
    return call(op_name(op), tensor_operand(a, promoted), tensor_operand(b, promoted));
  }

  std::string reduction(const Node& n) const {
    const OpId op = n.op;
    std::string x = operand(n.args[0]);
    int64_t rank = static_cast<int64_t>(g_.type(n.args[0].value).rank());
    bool keepdim = n.attr_bool("keepdim", false);
    std::string kd = py_bool(keepdim);
    if (op == OpId::Argmax) {
      std::string d = n.has_attr("dim") ? std::to_string(n.attr_int("dim", 0)) : "None";
      return "torch.argmax(" + x + ", " + d + ", " + kd + ")";
    }
    auto listed = n.attr_int_list("dim");
    bool all = !listed || listed->empty();
    std::vector<int64_t> dims = all ? std::vector<int64_t>{} : *listed;
    std::vector<int64_t> every(static_cast<size_t>(rank));
    std::iota(every.begin(), every.end(), int64_t{0});
    if (op == OpId::Sum || op == OpId::Mean) {
      if (all && !keepdim) return "torch." + op_name(op) + "(" + x + ")";
      // A 0-d tensor accepts dim 0.
      return "torch." + op_name(op) + "(" + x + ", " + int_list(all ? (rank ? every : std::vector<int64_t>{0}) : dims) +
             ", " + kd + ")";
    }
    if (op == OpId::Var)
      return "torch.var(" + x + ", " + (all ? std::string("None") : int_list(dims)) +
             ", correction=" + std::to_string(n.attr_int("correction", 1)) + ", keepdim=" + kd + ")";
    // amax and amin read an empty list as every dim; logsumexp needs them listed.
    if (op == OpId::Amax || op == OpId::Amin) return "torch." + op_name(op) + "(" + x + ", " + int_list(dims) + ", " + kd + ")";
    if (op == OpId::Logsumexp) return "torch.logsumexp(" + x + ", " + int_list(all ? every : dims) + ", " + kd + ")";
    if (op == OpId::Prod) {
      // ATen's prod takes one dim: reduce one at a time, highest first, so that the remaining
      // indices stay valid when keepdim is false (what the eager reference does too).
      if (all && !keepdim) return "torch.prod(" + x + ")";
      if (all) dims = every;
      if (dims.empty()) return "torch.prod(" + x + ")";
      int64_t r = std::max<int64_t>(rank, 1);
      for (auto& d : dims)
        if (d < 0 && d >= -r) d += r;
      std::sort(dims.begin(), dims.end(), std::greater<int64_t>());
      std::string s = x;
      for (int64_t d : dims) s = "torch.prod(" + s + ", " + std::to_string(d) + ", " + kd + ")";
      return s;
    }
    internal_error("torchscript: '" + op_name(op) + "' is not a reduction");
  }

  std::string optional_arg(const Node& n, size_t i) const {
    return i < n.args.size() ? operand(n.args[i]) : std::string("None");
  }

  std::string normalization(const Node& n) const {
    const OpId op = n.op;
    std::string x = operand(n.args[0]);
    if (op == OpId::Softmax || op == OpId::LogSoftmax)
      return "torch." + op_name(op) + "(" + x + ", " + std::to_string(n.attr_int("dim", -1)) + ")";
    if (op == OpId::LayerNorm)
      return "torch.layer_norm(" + x + ", " + shape(*n.attr_shape("normalized_shape"), n) + ", " + optional_arg(n, 1) +
             ", " + optional_arg(n, 2) + ", " + torchscript_float_literal(n.attr_float("eps", 1e-5)) + ")";
    // cudnn_enabled as torch.nn.functional.batch_norm passes it (torch.backends.cudnn.enabled).
    std::vector<std::string> parts;
    for (size_t i = 0; i < 5; ++i) parts.push_back(operand(n.args[i]));
    parts.push_back(py_bool(n.attr_bool("training", false)));
    parts.push_back(torchscript_float_literal(n.attr_float("momentum", 0.1)));
    parts.push_back(torchscript_float_literal(n.attr_float("eps", 1e-5)));
    parts.push_back("True");
    return "torch.batch_norm(" + join(parts) + ")";
  }

  // ---- generic ATen ops (imported models) ----

  // A generic op as TorchScript calls it: `torch.NAME(...)` with the schema's arguments in order,
  // tensors from the node's args, the others from its attrs. An argument the attrs leave out takes
  // the schema's default, so the ones after it are written by keyword, as is a dtype (repro.py and
  // the adapters' Python spell `dtype=6` as `dtype=torch.float32`). A Tensor[] result is indexed.
  void generic_call(int indent, const Node& n) {
    const SchemaSignature sig = parse_schema_string(n.attr_string(kGenericSchemaAttr, ""));
    std::string name = sig.name;
    if (name.rfind("aten::", 0) != 0) throw std::invalid_argument("the TorchScript emitter writes only aten:: ops, not " + name);
    name = name.substr(6, name.find('.') == std::string::npos ? std::string::npos : name.find('.') - 6);
    std::vector<std::string> parts;
    bool keywords = false;
    size_t next = 0;
    for (const SchemaArgument& a : sig.arguments) {
      const AttrValue* v = n.attr(a.name);
      const bool none = v && std::holds_alternative<NoneAttr>(*v);
      std::string text;
      if (a.type == "Tensor" || a.type == "Tensor?") {
        text = none ? "None" : operand(n.args.at(next++));
      } else if (a.type == "Tensor[]" || a.type == "Tensor?[]") {
        std::vector<std::string> elems;
        if (a.type == "Tensor[]" && v && std::holds_alternative<int64_t>(*v))
          for (int64_t i = 0; i < std::get<int64_t>(*v); ++i) elems.push_back(operand(n.args.at(next++)));
        else if (const auto* flags = v ? std::get_if<std::vector<int64_t>>(v) : nullptr)
          for (int64_t f : *flags) elems.push_back(f ? operand(n.args.at(next++)) : "None");
        text = "[" + join(elems) + "]";
      } else if (a.type.rfind("Device", 0) == 0 && (!v || none)) {
        text = device();  // created tensors go where the graph runs
      } else if (!v) {
        keywords = true;  // the schema's default
        continue;
      } else {
        text = generic_literal(a, *v, n);
      }
      keywords = keywords || a.keyword_only || a.type.rfind("ScalarType", 0) == 0;
      parts.push_back(keywords ? a.name + "=" + text : text);
    }
    const std::string call = "torch." + name + "(" + join(parts) + ")";
    if (sig.returns.size() == 1 && sig.returns[0] == "Tensor[]") {
      const std::string list = mangle(g_.name_of(n.output()) + "_list");
      line(indent, list + " = " + call, &n);
      for (size_t i = 0; i < n.outputs.size(); ++i) line(indent, define(n.outputs[i]) + " = " + list + "[" + std::to_string(i) + "]", &n);
      return;
    }
    std::vector<std::string> results;
    for (ValueId v : n.outputs) results.push_back(define(v));
    line(indent, (results.empty() ? "" : join(results) + " = ") + call, &n);
  }

  std::string generic_literal(const SchemaArgument& a, const AttrValue& v, const Node& n) const {
    const bool floats = a.type.rfind("float", 0) == 0, bools = a.type.rfind("bool", 0) == 0;
    if (std::holds_alternative<NoneAttr>(v)) return "None";
    if (const auto* s = std::get_if<std::string>(&v)) {
      if (a.type.rfind("Device", 0) == 0) return "torch.device(" + torchscript_string_literal(*s) + ")";
      if (a.type.rfind("ScalarType", 0) == 0 || a.type.rfind("int", 0) == 0)
        if (auto dt = parse_dtype(*s)) return dtype_arg(*dt);
      return torchscript_string_literal(*s);
    }
    if (const auto* d = std::get_if<DType>(&v)) return dtype_arg(*d);
    if (const auto* b = std::get_if<bool>(&v)) return py_bool(*b);
    if (const auto* i = std::get_if<int64_t>(&v))
      return floats ? torchscript_float_literal(static_cast<double>(*i)) : bools ? py_bool(*i != 0) : torchscript_int_literal(*i);
    if (const auto* f = std::get_if<double>(&v)) return torchscript_float_literal(*f);
    if (const auto* s = std::get_if<Scalar>(&v)) return scalar_arg_literal(*s);
    if (const auto* l = std::get_if<std::vector<int64_t>>(&v)) {
      std::vector<std::string> items;
      for (int64_t x : *l)
        items.push_back(floats ? torchscript_float_literal(static_cast<double>(x)) : bools ? py_bool(x != 0) : torchscript_int_literal(x));
      return "[" + join(items) + "]";
    }
    if (const auto* l = std::get_if<std::vector<double>>(&v)) {
      std::vector<std::string> items;
      for (double x : *l) items.push_back(torchscript_float_literal(x));
      return "[" + join(items) + "]";
    }
    if (const auto* sh = std::get_if<SymShape>(&v)) return shape(*sh, n);
    throw std::invalid_argument("the TorchScript emitter cannot write argument '" + a.name + "' of " + generic_op_name(n));
  }

  std::string extern_call(const Node& n) const {
    const OpId op = n.op;
    if (op == OpId::Matmul || op == OpId::Bmm) return "torch." + op_name(op) + "(" + operand(n.args[0]) + ", " + operand(n.args[1]) + ")";
    if (op == OpId::Linear)
      return "torch.linear(" + operand(n.args[0]) + ", " + operand(n.args[1]) + ", " + optional_arg(n, 2) + ")";
    if (op == OpId::Addmm || op == OpId::Baddbmm) {
      auto factor = [&](const char* name) { return scalar_arg_literal(n.attr_scalar(name).value_or(Scalar::from_int(1))); };
      return "torch." + op_name(op) + "(" + operand(n.args[0]) + ", " + operand(n.args[1]) + ", " + operand(n.args[2]) +
             ", beta=" + factor("beta") + ", alpha=" + factor("alpha") + ")";
    }
    if (op == OpId::Embedding)
      return "torch.embedding(" + operand(n.args[0]) + ", " + operand(n.args[1]) + ", " +
             std::to_string(n.attr_int("padding_idx", -1)) + ")";
    // conv2d and the pools: an int stride/padding/dilation applies to both spatial dims.
    auto pair = [&](const char* name, int64_t fallback) {
      auto v = n.attr_int_list(name).value_or(std::vector<int64_t>{fallback});
      if (v.size() == 1) v.push_back(v[0]);
      return int_list(v);
    };
    if (op == OpId::AdaptiveAvgPool2d)
      return "torch._C._nn.adaptive_avg_pool2d(" + operand(n.args[0]) + ", " + pair("output_size", 1) + ")";
    if (op == OpId::MaxPool2d || op == OpId::AvgPool2d) {
      const std::string stride = n.has_attr("stride") ? pair("stride", 1) : "[]";  // []: the kernel size
      std::string call = "torch." + op_name(op) + "(" + operand(n.args[0]) + ", " + pair("kernel_size", 1) + ", " + stride + ", " +
                         pair("padding", 0) + ", ";
      if (op == OpId::MaxPool2d) return call + pair("dilation", 1) + ", " + py_bool(n.attr_bool("ceil_mode", false)) + ")";
      return call + py_bool(n.attr_bool("ceil_mode", false)) + ", " + py_bool(n.attr_bool("count_include_pad", true)) + ", " +
             (n.has_attr("divisor_override") ? std::to_string(n.attr_int("divisor_override", 1)) : "None") + ")";
    }
    return "torch.conv2d(" + operand(n.args[0]) + ", " + operand(n.args[1]) + ", " + optional_arg(n, 2) + ", " +
           pair("stride", 1) + ", " + pair("padding", 0) + ", " + pair("dilation", 1) + ", " +
           std::to_string(n.attr_int("groups", 1)) + ")";
  }

  std::string view(const Node& n) const {
    const OpId op = n.op;
    std::string x = operand(n.args[0]);
    if (op == OpId::Reshape) return "torch.reshape(" + x + ", " + shape(*n.attr_shape("shape"), n) + ")";
    if (op == OpId::Permute) return "torch.permute(" + x + ", " + int_list(*n.attr_int_list("dims")) + ")";
    if (op == OpId::Transpose)
      return "torch.transpose(" + x + ", " + std::to_string(n.attr_int("dim0", 0)) + ", " +
             std::to_string(n.attr_int("dim1", 0)) + ")";
    if (op == OpId::Expand) return x + ".expand(" + shape(*n.attr_shape("size"), n) + ")";
    if (op == OpId::Squeeze)
      return n.has_attr("dim") ? "torch.squeeze(" + x + ", " + std::to_string(n.attr_int("dim", 0)) + ")"
                               : "torch.squeeze(" + x + ")";
    if (op == OpId::Unsqueeze) return "torch.unsqueeze(" + x + ", " + std::to_string(n.attr_int("dim", 0)) + ")";
    if (op == OpId::Slice) {
      std::string end = n.has_attr("end") ? std::to_string(n.attr_int("end", 0)) : "None";
      return "torch.slice(" + x + ", " + std::to_string(n.attr_int("dim", 0)) + ", " +
             std::to_string(n.attr_int("start", 0)) + ", " + end + ", " + std::to_string(n.attr_int("step", 1)) + ")";
    }
    if (op == OpId::Flatten)
      return "torch.flatten(" + x + ", " + std::to_string(n.attr_int("start_dim", 0)) + ", " +
             std::to_string(n.attr_int("end_dim", -1)) + ")";
    internal_error("torchscript: '" + op_name(op) + "' is not a view op");
  }

  const Graph& g_;
  TorchScriptOptions opt_;
  TorchScriptProgram out_;
  std::vector<std::string> names_;  // by ValueId; "" until defined
  std::set<std::string> used_;
  std::vector<std::map<std::string, std::string>> dim_scopes_;  // dim name -> int expression
};

}  // namespace

const TorchScriptLine* TorchScriptProgram::line(int number) const {
  if (number < 1 || static_cast<size_t>(number) > lines.size()) return nullptr;
  return &lines[static_cast<size_t>(number) - 1];
}

TorchScriptEmitError::TorchScriptEmitError(const Node& node, const std::string& message)
    : std::runtime_error(op_name(node.op) + ": " + message), loc_(node.loc), op_(op_name(node.op)) {}

TorchScriptProgram emit_torchscript(const Graph& graph, const TorchScriptOptions& options) {
  return Emitter(graph, options).run();
}

std::string torchscript_float_literal(double value) {
  if (std::isnan(value)) return "float('nan')";
  if (std::isinf(value)) return value > 0 ? "float('inf')" : "float('-inf')";
  // The shortest text that reads back to the same double.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), value);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string torchscript_int_literal(int64_t value) {
  if (value == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807 - 1)";
  return std::to_string(value);
}

std::string torchscript_string_literal(const std::string& text) {
  std::string s = "'";
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '\\': s += "\\\\"; break;
      case '\'': s += "\\'"; break;
      case '\n': s += "\\n"; break;
      case '\t': s += "\\t"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          const char digits[] = "01234567";
          s += '\\';
          s += digits[(u >> 6) & 7];
          s += digits[(u >> 3) & 7];
          s += digits[u & 7];
        } else {
          s += c;
        }
    }
  }
  return s + "'";
}

int torchscript_dtype_code(DType dtype) {
  switch (dtype) {
    case DType::UInt8: return 0;
    case DType::Int8: return 1;
    case DType::Int16: return 2;
    case DType::Int32: return 3;
    case DType::Int64: return 4;
    case DType::Float16: return 5;
    case DType::Float32: return 6;
    case DType::Float64: return 7;
    case DType::Bool: return 11;
    case DType::BFloat16: return 15;
  }
  return 6;
}

}  // namespace gbc
