// Writes a graph as TorchScript source: one `forward` function with a statement per node, using
// torch.* (ATen) calls with ATen's argument order, the form a PyTorch user would script by hand.
// The nnc backend compiles this text with torch::jit::compile and lets the TensorExpr fuser work on
// it. Pure string work without torch, so it builds and tests fast. Generic ATen ops (imported
// models) are written from their schema string (compiler/ir/schema_string.h).
//
// Semantics kept from the IR: numbers in args stay Python numbers (ATen's wrapped numbers) where
// ATen has a Scalar overload, and become 0-d tensors of the promoted dtype where it has none (which
// promotes exactly as the wrapped number would); symbolic sizes are computed at run time from the
// input tensor that first declares each dim (`x.size(0)`); model ids are mangled into identifiers
// that cannot clash with Python keywords or TorchScript builtins.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace gbc {

struct TorchScriptOptions {
  std::string device = "cpu";  // where `full` and number operands turned into tensors are created
};

/// The node an emitted line came from, so that TorchScript's errors ("line 7") can name it.
struct TorchScriptLine {
  SourceLoc loc;
  std::string op;  // "" for lines no node wrote (the signature, `else:`, `return`)
};

struct TorchScriptProgram {
  std::string source;                 // `def forward(...)`, ending in a newline
  std::vector<TorchScriptLine> lines;  // lines[i] describes line i + 1 of source
  std::vector<std::string> input_names;  // forward's parameters, in graph.inputs order
  std::map<std::string, std::string> identifiers;  // a value's model id -> its name in the source

  /// The origin of a 1-based line; nullptr when out of range.
  const TorchScriptLine* line(int number) const;
};

/// A graph TorchScript cannot express (a dim that no input binds). Names the node.
class TorchScriptEmitError : public std::runtime_error {
 public:
  TorchScriptEmitError(const Node& node, const std::string& message);
  const SourceLoc& loc() const { return loc_; }
  const std::string& op() const { return op_; }

 private:
  SourceLoc loc_;
  std::string op_;
};

/// The TorchScript source for a graph whose types are inferred (a loaded model).
TorchScriptProgram emit_torchscript(const Graph& graph, const TorchScriptOptions& options = {});

/// A Python float literal that TorchScript reads back to the same double: "2.5", "1.0", "1e+20",
/// "-0.0", "float('nan')", "float('-inf')".
std::string torchscript_float_literal(double value);
/// A Python int literal; int64's minimum is written as an expression (its magnitude overflows).
std::string torchscript_int_literal(int64_t value);
/// A single-quoted string literal; control characters become octal escapes (TorchScript has no \x).
std::string torchscript_string_literal(const std::string& text);
/// c10::ScalarType's number for a dtype: TorchScript compiled without Python has no torch.float32,
/// so dtypes are written as these ints (what torch.float32 evaluates to in TorchScript).
int torchscript_dtype_code(DType dtype);

}  // namespace gbc
