#include "harness/cli/inject_fault.h"

#include <algorithm>
#include <iomanip>
#include <iostream>

#include "compiler/kernel/fault_injection.h"
#include "harness/runner/check_report.h"

namespace gbc {

void print_fault_list(std::ostream& out) {
  out << "Faults gbc can be built with (a testing aid: --inject-fault KIND; docs/debugging.md):\n";
  for (const FaultKind& k : fault_kinds())
    out << "  " << std::left << std::setw(13) << k.name << k.summary << " [" << k.where << "; "
        << (k.interpreted ? "gbc-interp, gbc" : "gbc only") << "]\n";
}

std::vector<std::string> backends_with_fault(const std::string& kind) {
  std::optional<InjectedFault> fault = parse_fault(kind);
  if (!fault || *fault == InjectedFault::None) return {};
  if (find_fault(*fault)->interpreted) return {"gbc-interp", "gbc"};
  return {"gbc"};
}

std::optional<int> check_inject_fault(const std::string& kind, const std::vector<std::string>& backends) {
  std::optional<InjectedFault> fault = parse_fault(kind);
  if (!fault || *fault == InjectedFault::None) {
    std::cerr << "gbcheck: unknown fault '" << kind << "' for --inject-fault; the kinds are:\n";
    print_fault_list(std::cerr);
    return kExitInvalid;
  }
  std::vector<std::string> with = backends_with_fault(kind);
  bool any = std::any_of(backends.begin(), backends.end(),
                         [&](const std::string& b) { return std::find(with.begin(), with.end(), b) != with.end(); });
  if (!any) {
    std::string names, affected;
    for (const auto& b : backends) names += (names.empty() ? "" : ", ") + b;
    for (const auto& b : with) affected += (affected.empty() ? "" : " or ") + b;
    std::cerr << "gbcheck: --inject-fault " << kind << " changes only " << affected
              << ", and none of the backends to run has it (" << names << ")\n"
              << "  name the backend explicitly, e.g. --backend " << with.back() << "\n";
    return kExitInvalid;
  }
  std::cerr << fault_banner(kind) << "\n";
  return std::nullopt;
}

std::string fault_banner(const std::string& kind) {
  return "*** FAULT INJECTION ACTIVE (--inject-fault " + kind +
         "): gbc miscompiles on purpose; failures below are expected, results are not real ***";
}

}  // namespace gbc
