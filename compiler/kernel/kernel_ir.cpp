// Constructors and the text form of the kernel IR (kernel_ir.h). Shared subexpressions print
// once, as `t<k> = ...` before their first use, so listings stay linear in the kernel's size.
// Tests: tests/kernel/lower_test.cpp (PrintKernel).
#include "compiler/kernel/kernel_ir.h"

#include <charconv>
#include <cmath>
#include <map>

namespace gbc::kir {
namespace {

std::shared_ptr<Expr> make(ExprKind kind, DType dtype) {
  auto e = std::make_shared<Expr>();
  e->kind = kind;
  e->dtype = dtype;
  return e;
}

std::string number_str(double v, DType dtype) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  // The shortest text that reads back as the same value of the constant's own type.
  auto res = dtype == DType::Float64 ? std::to_chars(buf, buf + sizeof buf, v)
                                     : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string const_str(const Expr& e) {
  std::string v;
  if (e.dtype == DType::Bool) v = e.i ? "true" : "false";
  else if (is_floating(e.dtype)) v = number_str(e.f, e.dtype);
  else v = std::to_string(e.i);
  // float32, int64 and bool constants read as plain numbers; others name their dtype.
  if (e.dtype == DType::Float32 || e.dtype == DType::Int64 || e.dtype == DType::Bool) return v;
  return std::string(dtype_name(e.dtype)) + "(" + v + ")";
}

std::string kind_str(const Buffer& b) {
  switch (b.index) {
    case IndexKind::Contiguous: return "contiguous";
    case IndexKind::Scalar: return "scalar";
    case IndexKind::Affine: return b.r_contiguous ? "affine(r contiguous)" : "affine";
    case IndexKind::Strided: return "strided(" + std::to_string(b.rank) + (b.r_contiguous ? ", rows contiguous)" : ")");
  }
  return "?";
}

std::string index_str(const Buffer& b) {
  if (b.col_step < 0) return kind_str(b);
  return kind_str(b) + ", q step " + (b.col_step == 2 ? std::string("s") : std::to_string(b.col_step));
}

bool is_leaf(const Expr& e) { return e.kind != ExprKind::Op && e.kind != ExprKind::Cast; }

// Prints expressions, naming those that several parents share.
class Printer {
 public:
  explicit Printer(const Kernel& k) : k_(k) {}

  // Counts parents so that shared subexpressions get names.
  void count(const ExprPtr& e) {
    if (++uses_[e.get()] > 1) return;
    for (const auto& a : e->args) count(a);
  }

  // The expression as text; `pending` collects definitions of shared subexpressions not yet
  // printed (emitted by the caller before the line that uses them).
  std::string str(const ExprPtr& e, std::string& pending) {
    if (!is_leaf(*e) && uses_[e.get()] > 1) {
      auto it = names_.find(e.get());
      if (it != names_.end()) return it->second;
      std::string body = inline_str(e, pending);
      std::string name = "t" + std::to_string(names_.size());
      names_[e.get()] = name;
      pending += "  " + name + " = " + body + "\n";
      return name;
    }
    return inline_str(e, pending);
  }

  std::string inline_str(const ExprPtr& e, std::string& pending) {
    switch (e->kind) {
      case ExprKind::Const: return const_str(*e);
      case ExprKind::Load: return "load(" + k_.buffers.at(static_cast<size_t>(e->i)).name + ")";
      case ExprKind::StageResult: return "s" + std::to_string(e->i);
      case ExprKind::ScalarArg: return "scalar" + std::to_string(e->i);
      case ExprKind::Cast: return std::string(dtype_name(e->dtype)) + "(" + str(e->args.at(0), pending) + ")";
      case ExprKind::Op: {
        std::string s = e->op + "(";
        for (size_t i = 0; i < e->args.size(); ++i) s += (i ? ", " : "") + str(e->args[i], pending);
        if (e->has_min) s += std::string(e->args.empty() ? "" : ", ") + "min=" + number_str(e->min, DType::Float64);
        if (e->has_max) s += ", max=" + number_str(e->max, DType::Float64);
        return s + ")";
      }
    }
    return "?";
  }

 private:
  const Kernel& k_;
  std::map<const Expr*, int> uses_;
  std::map<const Expr*, std::string> names_;
};

}  // namespace

ExprPtr constant(DType dtype, double value) {
  if (!is_floating(dtype)) return constant_int(dtype, static_cast<int64_t>(value));
  auto e = make(ExprKind::Const, dtype);
  e->f = value;
  return e;
}

ExprPtr constant_int(DType dtype, int64_t value) {
  auto e = make(ExprKind::Const, dtype);
  if (is_floating(dtype)) e->f = static_cast<double>(value);
  else e->i = dtype == DType::Bool ? (value != 0) : value;
  return e;
}

ExprPtr load(int buffer, DType compute) {
  auto e = make(ExprKind::Load, compute);
  e->i = buffer;
  return e;
}

ExprPtr stage_result(int stage, DType dtype) {
  auto e = make(ExprKind::StageResult, dtype);
  e->i = stage;
  return e;
}

ExprPtr scalar_arg(int index, DType dtype) {
  auto e = make(ExprKind::ScalarArg, dtype);
  e->i = index;
  return e;
}

ExprPtr op(const std::string& name, DType dtype, std::vector<ExprPtr> args) {
  auto e = make(ExprKind::Op, dtype);
  e->op = name;
  e->args = std::move(args);
  return e;
}

ExprPtr cast(ExprPtr value, DType dtype) {
  auto e = make(ExprKind::Cast, dtype);
  e->args = {std::move(value)};
  return e;
}

std::string combine_name(Combine c) {
  switch (c) {
    case Combine::Sum: return "sum";
    case Combine::Prod: return "prod";
    case Combine::Max: return "max";
    case Combine::Min: return "min";
    case Combine::ArgMax: return "argmax";
  }
  return "?";
}

const char* cuda_rows_name(CudaRows rows) {
  switch (rows) {
    case CudaRows::All: return "all";
    case CudaRows::Scalar: return "scalar";
    case CudaRows::Vector: return "vector";
    case CudaRows::Cached: return "cached";
    case CudaRows::SplitScalar: return "split_scalar";
    case CudaRows::SplitVector: return "split_vector";
  }
  return "?";
}

bool computes_op(const Kernel& kernel, const std::string& op) {
  std::vector<const Expr*> todo;
  for (const ExprPtr& e : kernel.node_values) todo.push_back(e.get());
  for (const Stage& s : kernel.stages) todo.push_back(s.value.get());
  for (const Store& s : kernel.stores) todo.push_back(s.value.get());
  while (!todo.empty()) {
    const Expr* e = todo.back();
    todo.pop_back();
    if (!e) continue;
    if (e->kind == ExprKind::Op && e->op == op) return true;
    for (const ExprPtr& a : e->args) todo.push_back(a.get());
  }
  return false;
}

std::string print_kernel(const Kernel& kernel) {
  bool reduction = kernel.kind == KernelKind::Reduction;
  const char* kind = !reduction ? " pointwise(i) {\n" : kernel.columns ? " reduction(o, r) columns {\n" : " reduction(o, r) {\n";
  std::string out = "kernel " + kernel.name + kind;
  if (kernel.fault != InjectedFault::None) out += "  injected fault: " + fault_name(kernel.fault) + " (--inject-fault)\n";
  for (const auto& b : kernel.buffers) {
    out += std::string(b.is_output ? "  out " : "  in  ") + b.name + ": " + std::string(dtype_name(b.dtype)) + " " +
           index_str(b) + (reduction && b.level == Level::Outer ? " per o" : "") + "\n";
  }
  for (size_t i = 0; i < kernel.scalar_args.size(); ++i)
    out += "  scalar" + std::to_string(i) + ": " + std::string(dtype_name(kernel.scalar_args[i])) + "\n";
  Printer printer(kernel);
  for (const auto& s : kernel.stages) printer.count(s.value);
  for (const auto& s : kernel.stores) printer.count(s.value);
  for (size_t i = 0; i < kernel.stages.size(); ++i) {
    const Stage& s = kernel.stages[i];
    std::string pending;
    std::string body = printer.str(s.value, pending);
    out += pending + "  s" + std::to_string(i) + " = " + combine_name(s.combine) + " over r (" +
           std::string(dtype_name(s.acc_dtype)) + "): " + body + "\n";
  }
  for (const auto& s : kernel.stores) {
    const Buffer& b = kernel.buffers.at(static_cast<size_t>(s.buffer));
    std::string pending;
    std::string body = printer.str(s.value, pending);
    std::string index = !reduction ? "[i]" : b.level == Level::Outer ? "[o]" : "[o, r]";
    out += pending + "  " + b.name + index + " = " + body + "\n";
  }
  return out + "}\n";
}

std::string print_expr(const ExprPtr& expr, const Kernel& kernel) {
  Printer printer(kernel);
  std::string pending;
  return printer.inline_str(expr, pending);
}

}  // namespace gbc::kir
