#include "compiler/codegen/c_emitter.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "compiler/ir/diagnostics.h"

namespace gbc::codegen {
namespace {

using kir::ExprKind;

const kir::Buffer& buffer_at(const kir::Kernel& kernel, int b) {
  GBC_INTERNAL_ASSERT(b >= 0 && static_cast<size_t>(b) < kernel.buffers.size(),
                      "codegen: buffer " + std::to_string(b) + " out of range in kernel " + kernel.name);
  return kernel.buffers[static_cast<size_t>(b)];
}

// Shortest text that reads back as the same value of the literal's type.
std::string finite_float_text(double v, bool single) {
  char buf[64];
  auto res = single ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v)) : std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return single ? s + "f" : s;
}

bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return true;
}

// Integer bounds converted as the interpreter does (static_cast from double), wrapped to the type.
int64_t integral_bound(DType dtype, double v) {
  GBC_INTERNAL_ASSERT(std::isfinite(v) && std::fabs(v) < 9.2e18, "codegen: integer clamp bound out of range");
  int64_t i = static_cast<int64_t>(v);
  switch (dtype) {
    case DType::Bool: return i != 0;
    case DType::UInt8: return static_cast<uint8_t>(i);
    case DType::Int8: return static_cast<int8_t>(i);
    case DType::Int16: return static_cast<int16_t>(i);
    case DType::Int32: return static_cast<int32_t>(i);
    default: return i;
  }
}

// bool tensors are read and written through uint8_t pointers (ATen stores 0 or 1): GCC does not
// vectorize a loop that loads `bool` next to wider types ("no vectype"), so a masked row (a
// `where` on a bool mask) ran scalar, several times slower than eager (issue 19).
std::string storage_type(DType storage) { return storage == DType::Bool ? "uint8_t" : c_type(storage); }

std::string widen(DType storage, const std::string& element) {
  if (storage == DType::Bool) return "(" + element + " != 0)";
  if (storage == DType::Float16) return "gbc_f16_to_f32(" + element + ")";
  if (storage == DType::BFloat16) return "gbc_bf16_to_f32(" + element + ")";
  return element;
}

// Whether `e` is the rounding of a float32 to the half type `storage` (kir::Cast's float16/bfloat16 form).
bool rounded_to(const kir::Expr& e, DType storage) {
  if (e.kind != kir::ExprKind::Op || e.args.size() != 1 || e.args[0]->dtype != DType::Float32) return false;
  return (storage == DType::Float16 && e.op == "round_float16") || (storage == DType::BFloat16 && e.op == "round_bfloat16");
}

std::string narrow(DType storage, const std::string& value) {
  if (storage == DType::Bool) return "(uint8_t)(" + value + ")";
  if (storage == DType::Float16) return "gbc_f32_to_f16(" + value + ")";
  if (storage == DType::BFloat16) return "gbc_f32_to_bf16(" + value + ")";
  return value;
}

}  // namespace

const CDialect& cpu_dialect() {
  static const CDialect dialect{"a->", "__builtin_inff()", "__builtin_nanf(\"\")", "__builtin_inf()", "__builtin_nan(\"\")"};
  return dialect;
}

const CDialect& cuda_dialect() {
  static const CDialect dialect{"a.", "__int_as_float(0x7f800000)", "__int_as_float(0x7fc00000)",
                                "__longlong_as_double(0x7ff0000000000000LL)",
                                "__longlong_as_double(0x7ff8000000000000LL)"};
  return dialect;
}

std::string c_type(DType dtype) { return std::string(dtype_c_type(dtype)); }

std::string literal(DType dtype, double f, int64_t i, const CDialect& dialect) {
  switch (dtype) {
    case DType::Float32:
    case DType::Float64: {
      const bool single = dtype == DType::Float32;
      if (std::isnan(f)) return single ? dialect.nan_f32 : dialect.nan_f64;
      if (std::isinf(f)) return (f < 0 ? "-" : "") + (single ? dialect.inf_f32 : dialect.inf_f64);
      return finite_float_text(f, single);
    }
    case DType::Bool: return i ? "true" : "false";
    case DType::Int64:
      // -2^63 has no literal: 9223372036854775808 does not fit a signed type.
      if (i == std::numeric_limits<int64_t>::min()) return "(int64_t)(-9223372036854775807LL - 1)";
      return "(int64_t)" + std::to_string(i) + "LL";
    case DType::UInt8:
    case DType::Int8:
    case DType::Int16:
    case DType::Int32: return "(" + c_type(dtype) + ")" + std::to_string(i);
    case DType::Float16:
    case DType::BFloat16: break;
  }
  internal_error("codegen: no literal of storage-only dtype " + std::string(dtype_name(dtype)));
}

std::string identity_literal(kir::Combine combine, DType acc, const CDialect& dialect) {
  const double inf = std::numeric_limits<double>::infinity();
  auto lowest = [&]() -> int64_t {
    switch (acc) {
      case DType::Bool: return 0;
      case DType::UInt8: return 0;
      case DType::Int8: return std::numeric_limits<int8_t>::lowest();
      case DType::Int16: return std::numeric_limits<int16_t>::lowest();
      case DType::Int32: return std::numeric_limits<int32_t>::lowest();
      default: return std::numeric_limits<int64_t>::lowest();
    }
  };
  auto highest = [&]() -> int64_t {
    switch (acc) {
      case DType::Bool: return 1;
      case DType::UInt8: return std::numeric_limits<uint8_t>::max();
      case DType::Int8: return std::numeric_limits<int8_t>::max();
      case DType::Int16: return std::numeric_limits<int16_t>::max();
      case DType::Int32: return std::numeric_limits<int32_t>::max();
      default: return std::numeric_limits<int64_t>::max();
    }
  };
  switch (combine) {
    case kir::Combine::Sum: return literal(acc, 0.0, 0, dialect);
    case kir::Combine::Prod: return literal(acc, 1.0, 1, dialect);
    case kir::Combine::Max:
    case kir::Combine::ArgMax: return literal(acc, -inf, lowest(), dialect);
    case kir::Combine::Min: return literal(acc, inf, highest(), dialect);
  }
  internal_error("codegen: unknown combine");
}

std::string combine_function(kir::Combine combine) {
  switch (combine) {
    case kir::Combine::Sum: return "gbc_add";
    case kir::Combine::Prod: return "gbc_mul";
    case kir::Combine::Max: return "gbc_maximum";
    case kir::Combine::Min: return "gbc_minimum";
    case kir::Combine::ArgMax: break;
  }
  internal_error("codegen: ArgMax has no combine function; it folds (value, index) pairs");
}

std::string buffer_pointer(int buffer) { return "p" + std::to_string(buffer); }

Scope::Scope(int depth, std::string indent, Indexing indexing, Scope* parent)
    : depth_(depth), indent_(std::move(indent)), indexing_(std::move(indexing)), parent_(parent) {
  GBC_INTERNAL_ASSERT(!parent || parent->depth_ <= depth, "codegen: a scope nested in a deeper one");
}

void Scope::line(const std::string& text) { code_ += indent_ + text + "\n"; }

CEmitter::CEmitter(const kir::Kernel& kernel, const CDialect& dialect) : kernel_(kernel), dialect_(dialect) {
  GBC_INTERNAL_ASSERT(is_identifier(kernel.name), "codegen: kernel name '" + kernel.name + "' is not a C identifier");
}

std::string CEmitter::buffer_locals(const std::string& indent) const {
  std::string out;
  const bool reduction = kernel_.kind == kir::KernelKind::Reduction;
  for (size_t k = 0; k < kernel_.buffers.size(); ++k) {
    const kir::Buffer& b = kernel_.buffers[k];
    const int index = static_cast<int>(k);
    const std::string field = dialect_.args + "buffers[" + std::to_string(k) + "]";
    const std::string type = (b.is_output ? "" : "const ") + storage_type(b.dtype) + "*";
    out += indent + type + " __restrict__ " + buffer_pointer(index) + " = (" + type + ")" + field + ".data;\n";
    if (b.index == kir::IndexKind::Affine) {
      out += indent + "const int64_t " + buffer_pointer(index) + "_s0 = " + field + ".s0;\n";
      if (reduction && b.level == kir::Level::Full && !b.r_contiguous)
        out += indent + "const int64_t " + buffer_pointer(index) + "_s1 = " + field + ".s1;\n";
    }
  }
  return out;
}

std::string CEmitter::scalar_locals(const std::string& indent) const {
  std::string out;
  for (size_t k = 0; k < kernel_.scalar_args.size(); ++k) {
    const std::string type = c_type(kernel_.scalar_args[k]);
    out += indent + "const " + type + " sc" + std::to_string(k) + " = (" + type + ")" + dialect_.args + "scalars[" +
           std::to_string(k) + "];\n";
  }
  return out;
}

std::string CEmitter::buffer_arg(int buffer) const {
  return "&" + dialect_.args + "buffers[" + std::to_string(buffer) + "]";
}

std::string CEmitter::offset(int buffer, const Indexing& ix) const {
  const kir::Buffer& b = buffer_at(kernel_, buffer);
  const std::string p = buffer_pointer(buffer);
  const bool per_row = ix.reduction && b.level == kir::Level::Outer;
  const bool per_element = ix.reduction && !per_row;
  switch (b.index) {
    case kir::IndexKind::Scalar: return "0";
    case kir::IndexKind::Contiguous:
      return per_element ? ix.o + " * " + ix.inner + " + " + ix.r : per_row ? ix.o : ix.i;
    case kir::IndexKind::Affine:
      if (per_element && b.r_contiguous) return ix.o + " * " + p + "_s0 + " + ix.r;
      return per_element ? ix.o + " * " + p + "_s0 + " + ix.r + " * " + p + "_s1"
                         : (per_row ? ix.o : ix.i) + " * " + p + "_s0";
    case kir::IndexKind::Strided: {
      if (per_element && b.r_contiguous)
        return "gbc_strided_offset(" + buffer_arg(buffer) + ", " + std::to_string(b.rank) + ", " + ix.o + " * " + ix.inner + ") + " + ix.r;
      const std::string linear = per_element ? ix.o + " * " + ix.inner + " + " + ix.r : per_row ? ix.o : ix.i;
      return "gbc_strided_offset(" + buffer_arg(buffer) + ", " + std::to_string(b.rank) + ", " + linear + ")";
    }
  }
  internal_error("codegen: unknown index kind");
}

std::string CEmitter::element(int buffer, const Indexing& ix) const {
  auto it = ix.element.find(buffer);
  if (it != ix.element.end()) return it->second;
  return buffer_pointer(buffer) + "[" + offset(buffer, ix) + "]";
}

int CEmitter::buffer_depth(int buffer) const {
  const kir::Buffer& b = buffer_at(kernel_, buffer);
  if (b.index == kir::IndexKind::Scalar) return Scope::Kernel;
  if (kernel_.kind == kir::KernelKind::Reduction && b.level == kir::Level::Outer) return Scope::Row;
  return Scope::Element;
}

int CEmitter::depth(const kir::ExprPtr& e) {
  auto it = depths_.find(e.get());
  if (it != depths_.end()) return it->second;
  int d = Scope::Kernel;
  switch (e->kind) {
    case ExprKind::Const:
    case ExprKind::ScalarArg: d = Scope::Kernel; break;
    case ExprKind::StageResult: d = Scope::Row; break;
    case ExprKind::Load: d = buffer_depth(static_cast<int>(e->i)); break;
    case ExprKind::Op:
    case ExprKind::Cast:
      for (const auto& a : e->args) d = std::max(d, depth(a));
      break;
  }
  depths_[e.get()] = d;
  return d;
}

std::string CEmitter::fresh(const std::string& prefix) { return prefix + std::to_string(next_name_++); }

std::string CEmitter::rhs(const kir::Expr& e, const std::vector<std::string>& args, const Indexing& ix) const {
  auto call = [&](const std::string& fn) {
    std::string s = fn + "(";
    for (size_t k = 0; k < args.size(); ++k) s += (k ? ", " : "") + args[k];
    return s + ")";
  };
  switch (e.kind) {
    case ExprKind::Load: {
      const kir::Buffer& b = buffer_at(kernel_, static_cast<int>(e.i));
      GBC_INTERNAL_ASSERT(compute_dtype(b.dtype) == e.dtype,
                          "codegen: load of " + b.name + " as " + std::string(dtype_name(e.dtype)) + " in " + kernel_.name);
      return widen(b.dtype, element(static_cast<int>(e.i), ix));
    }
    case ExprKind::Cast: return call("gbc_cast_" + std::string(dtype_name(e.dtype)));
    case ExprKind::Op: {
      GBC_INTERNAL_ASSERT(is_identifier(e.op), "codegen: op name '" + e.op + "' is not an identifier");
      if (e.op != "clamp") return call("gbc_" + e.op);
      GBC_INTERNAL_ASSERT(args.size() == 1, "codegen: clamp takes one operand in " + kernel_.name);
      auto bound = [&](double v) {
        return is_floating(e.dtype) ? literal(e.dtype, v, 0, dialect_) : literal(e.dtype, 0.0, integral_bound(e.dtype, v), dialect_);
      };
      std::string s = args[0];
      if (e.has_min) s = "gbc_clamp_min(" + s + ", " + bound(e.min) + ")";
      if (e.has_max) s = "gbc_clamp_max(" + s + ", " + bound(e.max) + ")";
      return s;
    }
    case ExprKind::Const:
    case ExprKind::StageResult:
    case ExprKind::ScalarArg: break;
  }
  internal_error("codegen: leaf expressions have no statement");
}

std::string CEmitter::value(const kir::ExprPtr& e, Scope& scope) {
  GBC_INTERNAL_ASSERT(e != nullptr, "codegen: null expression in kernel " + kernel_.name);
  GBC_INTERNAL_ASSERT(e->dtype != DType::Float16 && e->dtype != DType::BFloat16,
                      "codegen: an expression of storage dtype " + std::string(dtype_name(e->dtype)) + " in " + kernel_.name);
  switch (e->kind) {
    case ExprKind::Const: return literal(e->dtype, e->f, e->i, dialect_);
    case ExprKind::ScalarArg:
      GBC_INTERNAL_ASSERT(e->i >= 0 && static_cast<size_t>(e->i) < kernel_.scalar_args.size() &&
                              kernel_.scalar_args[static_cast<size_t>(e->i)] == e->dtype,
                          "codegen: scalar argument " + std::to_string(e->i) + " misused in " + kernel_.name);
      return "sc" + std::to_string(e->i);
    case ExprKind::StageResult:
      GBC_INTERNAL_ASSERT(e->i >= 0 && static_cast<size_t>(e->i) < kernel_.stages.size(),
                          "codegen: stage " + std::to_string(e->i) + " out of range in " + kernel_.name);
      if (!scope.indexing().stage.empty()) return "s" + std::to_string(e->i) + "[" + scope.indexing().stage + "]";
      return "s" + std::to_string(e->i);
    case ExprKind::Load:
    case ExprKind::Op:
    case ExprKind::Cast: break;
  }
  for (Scope* s = &scope; s; s = s->parent_) {
    auto it = s->names_.find(e.get());
    if (it != s->names_.end()) return it->second;
  }
  const int d = depth(e);
  GBC_INTERNAL_ASSERT(d <= scope.depth(), "codegen: a value of depth " + std::to_string(d) + " needed in a scope of depth " +
                                              std::to_string(scope.depth()) + " in " + kernel_.name);
  Scope* target = &scope;
  while (target->parent_ && target->parent_->depth_ >= d) target = target->parent_;
  std::vector<std::string> args;
  for (const auto& a : e->args) args.push_back(value(a, *target));
  const std::string name = fresh("t");
  target->line("const " + c_type(e->dtype) + " " + name + " = " + rhs(*e, args, target->indexing_) + ";");
  target->names_[e.get()] = name;
  return name;
}

void CEmitter::store(const kir::Store& s, Scope& scope) {
  const kir::Buffer& b = buffer_at(kernel_, s.buffer);
  GBC_INTERNAL_ASSERT(b.is_output && s.value && s.value->dtype == compute_dtype(b.dtype),
                      "codegen: store to '" + b.name + "' of " + kernel_.name + " has the wrong dtype or target");
  // Narrowing rounds as the cast to the buffer's half type does: a value rounded by that cast is
  // stored unrounded (one conversion per element instead of three).
  const kir::ExprPtr& stored = rounded_to(*s.value, b.dtype) ? s.value->args[0] : s.value;
  const std::string v = value(stored, scope);
  scope.line(element(s.buffer, scope.indexing()) + " = " + narrow(b.dtype, v) + ";");
}

}  // namespace gbc::codegen
