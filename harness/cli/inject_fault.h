// The command line's side of fault injection (compiler/kernel/fault_injection.h): the only way to
// switch a fault on is `--inject-fault KIND` on the command line (no model key, no environment
// variable), it is refused unless a backend under check builds gbc kernels that have the fault,
// and every report made with it carries a banner. `gbcheck --inject-fault list` prints the kinds.
// Test: tests/faults/faults_test.cpp.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace gbc {

/// One line per kind: name, the bug, where it lives, which backends have it.
void print_fault_list(std::ostream& out);

/// Validates --inject-fault against the backends to run; prints why and returns the exit code to
/// stop with, or nullopt (and prints the banner to stderr) when the fault is usable.
std::optional<int> check_inject_fault(const std::string& kind, const std::vector<std::string>& backends);

/// The backends (of gbc's ladder) whose kernels have the fault.
std::vector<std::string> backends_with_fault(const std::string& kind);

/// The loud line every report of a run with a fault starts and ends with.
std::string fault_banner(const std::string& kind);

}  // namespace gbc
