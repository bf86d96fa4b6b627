// A failure's signature: which path failed, how (an oracle's divergence, an error the path raised,
// a crash signal, a timeout, an out-of-memory, a graph break under --fullgraph), and the op kinds
// involved. The reducer keeps it while shrinking a model, so that an accuracy bug is never
// "reduced" into an unrelated crash; the fuzzer dedupes failures by its hash.
//
// What counts as the same failure (same_failure) ignores the op kinds: a reduced model involves
// fewer ops than the model it came from, but it is the same bug when path, kind and detail agree.
// For deduplication, compute the signature of the reduced model, whose op list is minimal.
// Test: tests/reduce/failure_signature_test.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "harness/model/model.h"
#include "harness/runner/check_report.h"
#include "harness/sandbox/sandbox.h"

namespace gbc {

struct FailureSignature {
  enum class Kind {
    Divergence,  // an oracle failed an output
    Error,       // the path raised
    InternalError,  // an assertion of the path's own broke (gbc's InternalError, c10's INTERNAL ASSERT)
    Crash,       // a signal, or the process exited
    Timeout,
    Oom,
    GraphBreak,  // under --fullgraph
    Generator,   // the fuzzer's generator made a graph eager cannot judge (backend "eager")
  };

  std::string backend;
  Kind kind = Kind::Divergence;
  /// divergence: the failing oracles, sorted, comma-separated ("fp64,tolerance"); error and
  /// internal-error: the message's first line with numbers replaced by N (sizes and values vary,
  /// the error does not);
  /// crash: the signal name; oom: the exception type; graph-break: the break's code; timeout: "".
  std::string detail;
  /// Op kinds involved, sorted and unique: for a divergence the ops the failing outputs depend on,
  /// for an error located at a node that node's op, otherwise every op of the model.
  std::vector<std::string> ops;

  /// "divergence", "error", "internal-error", "crash", "timeout", "oom", "graph-break", "generator": how str(),
  /// JSON and the fuzz store write a kind.
  static std::string kind_name(Kind kind);
  /// The kind kind_name() writes as `name`; nullopt for any other text.
  static std::optional<Kind> kind_from_name(const std::string& name);

  /// "gbc divergence tolerance [sin,tanh]": stable across runs and machines.
  std::string str() const;
  /// 16 hex digits of a stable hash of str().
  std::string hash() const;
  /// The same bug: backend, kind and detail agree (ops may differ).
  bool same_failure(const FailureSignature& other) const;
  bool operator==(const FailureSignature& other) const;

  nlohmann::json to_json() const;
  /// Throws nlohmann::json::exception on a malformed object, std::invalid_argument on an unknown
  /// kind.
  static FailureSignature from_json(const nlohmann::json& j);
};

/// The ops of `model` that the values named `names` depend on (outputs or graph inputs), sorted.
std::vector<std::string> ops_involved(const Model& model, const std::vector<std::string>& names);
/// Every op kind of the model, sorted and unique.
std::vector<std::string> all_ops(const Model& model);

/// The signature of a backend's failing case (a CaseFailure of a CheckReport).
FailureSignature signature_of_failure(const Model& model, const std::string& backend, const CaseFailure& failure);
/// The signature of a path result: a divergence, or an error (kind error or internal-error).
FailureSignature signature_of_error(const Model& model, const std::string& backend, const std::string& error,
                                    const SourceLoc& error_loc, PathErrorKind error_kind = PathErrorKind::Raised);
FailureSignature signature_of_divergence(const Model& model, const std::string& backend,
                                         const std::vector<OutputCheck>& failing);
/// The signature of a sandboxed run that did not return (crash, timeout, oom, exception, exit).
FailureSignature signature_of_sandbox(const Model& model, const std::string& backend, const SandboxResult& result);
/// The first line of an error with digit runs replaced by N.
std::string normalize_error(const std::string& error);

}  // namespace gbc
