// Source locations and user-facing diagnostics. Every node keeps the YAML location it came from,
// so that an error, a graph break or a diverging node can be named as `file:line:col`.
// Two error channels (as in Halide): a Diagnostic is the user's mistake (exit code 2);
// InternalError is gbcheck's own bug (exit code 3).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace gbc {

struct SourceLoc {
  std::string file;
  int line = 0;  // 1-based; 0 when unknown
  int col = 0;   // 1-based
  /// Where an imported node came from in the user's own code ("resnet.py:92", from the
  /// TorchScript source range; docs/importing.md); empty for nodes written in model.yaml.
  std::string origin{};  // {}: loc{file, line, col} stays warning-free
  bool valid() const { return line > 0; }
  /// "file:line:col", or the file alone when the position is unknown; " (python: ORIGIN)" follows
  /// when the node has an origin, so every report that names a node points at the user's code too.
  std::string str() const;
};

struct Diagnostic {
  enum class Severity { Error, Warning, Note };
  Severity severity = Severity::Error;
  SourceLoc loc;
  std::string message;
  std::string hint;
  /// "mlp.yaml:9:5: error: matmul: inner dimensions differ (64 vs 48); hint: ..."
  std::string str() const;
};

class Diagnostics {
 public:
  void error(const SourceLoc& loc, std::string message, std::string hint = "");
  void warning(const SourceLoc& loc, std::string message, std::string hint = "");
  bool has_errors() const;
  size_t error_count() const;
  const std::vector<Diagnostic>& all() const { return list_; }
  std::string str() const;  // one line per diagnostic
  /// Orders by file position (stable), so reports read top to bottom.
  void sort_by_location();

 private:
  std::vector<Diagnostic> list_;
};

/// Input the user wrote is invalid; carries every diagnostic found. Exit code 2.
class InputError : public std::runtime_error {
 public:
  explicit InputError(Diagnostics diagnostics);
  const Diagnostics& diagnostics() const { return diagnostics_; }

 private:
  Diagnostics diagnostics_;
};

/// A model (model.yaml, or what the command line made of it) is invalid.
class ModelError : public InputError {
 public:
  using InputError::InputError;
};

/// A config file (configs/*.yaml, or one given with --fuzz-config or --reduce-config) is invalid
/// (docs/configs.md).
class ConfigError : public InputError {
 public:
  using InputError::InputError;
};

/// gbcheck itself is wrong (an invariant broke). Reported with exit code 3.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void internal_error(const std::string& message);

}  // namespace gbc

#define GBC_INTERNAL_ASSERT(cond, msg)                                                          \
  do {                                                                                          \
    if (!(cond))                                                                                \
      ::gbc::internal_error(std::string(__FILE__) + ":" + std::to_string(__LINE__) + ": " + (msg)); \
  } while (0)
