// The C-like emitter shared by the CPU (C++) and CUDA code generators: kernel IR expressions as C
// statements that call the prelude's gbc_<op> functions on values of explicit C types, buffer
// addressing by index kind, float16/bfloat16 storage conversions, reduction identities and
// combines, and stores. The targets differ only in a CDialect (how kernel code reaches its
// arguments, how non-finite literals are spelled) and in the loops they wrap around these pieces
// (cpu_codegen.cpp, cuda_codegen.cpp), as tinygrad's CStyleLanguage renderers do.
//
// Values are computed once per chain of scopes (shared subexpressions get one temporary) and in
// the outermost scope where everything they read is available: constants, host scalars and
// broadcast scalars once per kernel, stage results and per-row loads once per row, the rest per
// element. Tests: tests/codegen/c_emitter_test.cpp.
#pragma once

#include <map>
#include <string>

#include "compiler/kernel/kernel_ir.h"

namespace gbc::codegen {

/// What differs between C-like targets in expression and argument code.
struct CDialect {
  std::string args;  // prefix that reaches the kernel argument fields: "a->" (CPU) or "a." (CUDA)
  std::string inf_f32, nan_f32, inf_f64, nan_f64;
};
const CDialect& cpu_dialect();
const CDialect& cuda_dialect();

/// The C type a value of `dtype` has in generated code: compute types as themselves, float16 and
/// bfloat16 storage as uint16_t bits.
std::string c_type(DType dtype);
/// A literal of an exact C type, so overloads resolve as for a variable: "0.5f", "(int8_t)-3".
/// Floating dtypes read `f`, others `i`.
std::string literal(DType dtype, double f, int64_t i, const CDialect& dialect);
/// The value a stage's accumulator starts from (kir::Combine's identities).
std::string identity_literal(kir::Combine combine, DType acc, const CDialect& dialect);
/// The prelude function that folds one value into an accumulator ("gbc_add", ...); not ArgMax.
std::string combine_function(kir::Combine combine);
/// The local that points at buffer b's data: "p3".
std::string buffer_pointer(int buffer);

/// How the code at one point of a loop nest addresses buffers.
struct Indexing {
  bool reduction = false;
  std::string i = "i";  // pointwise: the linear index
  std::string o = "o";  // reduction: the row
  std::string r = "r";  // reduction: the index within the row
  std::string inner = "inner";
  /// Column schedule: stage results are arrays over the block's columns, indexed by this ("q").
  std::string stage;
  /// Per buffer: the element's C lvalue, replacing the address computed from the index kind
  /// (precomputed strided offsets, registers filled by a vector load).
  std::map<int, std::string> element;
};

/// A block of generated statements. Depth says what may be computed in it: Kernel (invariant),
/// Row (per reduction row) or Element; a value goes to the outermost enclosing scope whose depth
/// is at least the value's.
class Scope {
 public:
  enum Depth : int { Kernel = 0, Row = 1, Element = 2 };

  Scope(int depth, std::string indent, Indexing indexing, Scope* parent = nullptr);

  /// Appends one statement at this scope's indentation.
  void line(const std::string& text);
  /// Appends text as is (a nested block already indented).
  void append(const std::string& text) { code_ += text; }
  /// Declares e already computed here as the C expression `name` (a value kept in a row cache):
  /// CEmitter::value then returns name instead of computing e again.
  void bind(const kir::Expr* e, std::string name) { names_[e] = std::move(name); }
  const std::string& code() const { return code_; }
  int depth() const { return depth_; }
  const std::string& indent() const { return indent_; }
  const Indexing& indexing() const { return indexing_; }

 private:
  friend class CEmitter;

  int depth_;
  std::string indent_;
  Indexing indexing_;
  Scope* parent_;
  std::string code_;
  std::map<const kir::Expr*, std::string> names_;  // values computed here
};

class CEmitter {
 public:
  CEmitter(const kir::Kernel& kernel, const CDialect& dialect);

  const kir::Kernel& kernel() const { return kernel_; }
  const CDialect& dialect() const { return dialect_; }

  /// Declarations of each buffer's typed data pointer (p<b>, restrict) and the strides its index
  /// kind reads (p<b>_s0, p<b>_s1); Strided buffers are read through their GbcBufferArg.
  std::string buffer_locals(const std::string& indent) const;
  /// The host scalars converted once to their dtypes: sc<k>.
  std::string scalar_locals(const std::string& indent) const;

  /// The C lvalue of buffer b's element at a point (its storage type: uint16_t for halves).
  std::string element(int buffer, const Indexing& indexing) const;
  /// The element offset of buffer b at a point, from its index kind.
  std::string offset(int buffer, const Indexing& indexing) const;
  /// `&a->buffers[b]`: what gbc_strided_offset(s) read.
  std::string buffer_arg(int buffer) const;

  /// Emits the statements that compute e (and what it reads that is not yet computed) into scope
  /// or the scopes around it; returns the C expression naming the value.
  std::string value(const kir::ExprPtr& e, Scope& scope);
  /// Emits `element = narrow(value);` for a store in scope.
  void store(const kir::Store& store, Scope& scope);

  /// The depth a value needs (Scope::Depth).
  int depth(const kir::ExprPtr& e);
  int buffer_depth(int buffer) const;
  /// A new local name: prefix followed by a number unique in this kernel.
  std::string fresh(const std::string& prefix);

 private:
  std::string rhs(const kir::Expr& e, const std::vector<std::string>& args, const Indexing& indexing) const;

  const kir::Kernel& kernel_;
  const CDialect& dialect_;
  std::map<const kir::Expr*, int> depths_;
  int next_name_ = 0;
};

}  // namespace gbc::codegen
