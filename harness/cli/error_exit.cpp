#include "harness/cli/error_exit.h"

#include "compiler/ir/diagnostics.h"
#include "compiler/support/config_dir.h"
#include "harness/runner/check_report.h"

namespace gbc {

ErrorExit error_exit(const std::exception& error) {
  if (const auto* e = dynamic_cast<const InputError*>(&error)) return {kExitInvalid, e->diagnostics().str()};
  if (dynamic_cast<const ConfigNotFound*>(&error)) return {kExitEnvironment, "gbcheck: " + std::string(error.what()) + "\n"};
  if (dynamic_cast<const InternalError*>(&error))
    return {kExitInternal, "gbcheck: " + std::string(error.what()) +
                               "\nthis is a bug in gbcheck; please report it with the model and command\n"};
  return {kExitInternal, "gbcheck: internal error: " + std::string(error.what()) + "\n"};
}

std::string exit_code_meaning(int exit_code) {
  switch (exit_code) {
    case kExitPass: return "passed";
    case kExitDivergence: return "a compiled path diverged, raised or failed an expectation";
    case kExitInvalid: return "invalid model, config or usage";
    case kExitInternal: return "internal error";
    case kExitEnvironment: return "unusable environment";
    default: return "exit code " + std::to_string(exit_code);
  }
}

}  // namespace gbc
