#include "compiler/ir/diagnostics.h"

#include <algorithm>

namespace gbc {

std::string SourceLoc::str() const {
  std::string s = file.empty() ? "<model>" : file;
  if (line > 0) s += ":" + std::to_string(line) + ":" + std::to_string(col);
  if (!origin.empty()) s += " (python: " + origin + ")";
  return s;
}

std::string Diagnostic::str() const {
  const char* sev = severity == Severity::Error ? "error" : severity == Severity::Warning ? "warning" : "note";
  std::string s = loc.str() + ": " + sev + ": " + message;
  if (!hint.empty()) s += "; hint: " + hint;
  return s;
}

void Diagnostics::error(const SourceLoc& loc, std::string message, std::string hint) {
  list_.push_back({Diagnostic::Severity::Error, loc, std::move(message), std::move(hint)});
}

void Diagnostics::warning(const SourceLoc& loc, std::string message, std::string hint) {
  list_.push_back({Diagnostic::Severity::Warning, loc, std::move(message), std::move(hint)});
}

bool Diagnostics::has_errors() const { return error_count() > 0; }

size_t Diagnostics::error_count() const {
  return std::count_if(list_.begin(), list_.end(),
                       [](const Diagnostic& d) { return d.severity == Diagnostic::Severity::Error; });
}

std::string Diagnostics::str() const {
  std::string s;
  for (const auto& d : list_) s += d.str() + "\n";
  return s;
}

void Diagnostics::sort_by_location() {
  std::stable_sort(list_.begin(), list_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    if (a.loc.file != b.loc.file) return false;
    return a.loc.line != b.loc.line ? a.loc.line < b.loc.line : a.loc.col < b.loc.col;
  });
}

InputError::InputError(Diagnostics diagnostics)
    : std::runtime_error(diagnostics.str()), diagnostics_(std::move(diagnostics)) {}

void internal_error(const std::string& message) { throw InternalError("internal error: " + message); }

}  // namespace gbc
