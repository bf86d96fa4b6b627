// One question the bisector asks many times: does this backend, with these passes disabled,
// diverge from eager on this model? The check runs in a sandboxed child process
// (harness/sandbox/sandbox.h), so a stage whose generated code crashes or hangs is an answer
// ("crash SIGSEGV") instead of the end of the bisection. Shrinking is off: only the verdict and
// the first failing case matter here. Test: tests/bisect/bisect_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "harness/model/model.h"
#include "harness/runner/check_runner.h"

namespace gbc {

struct ProbeResult {
  bool diverged = false;
  bool crashed = false;   // the checking process died (a signal, a timeout, out of memory)
  int failing_case = -1;  // the first failing case, when one was judged
  std::string summary;    // one line: what failed, or "pass"
};

struct ProbeOptions {
  RunOptions run;                            // cases, seed, --case, backend options (faults, cache)
  std::vector<std::string> disabled_passes;  // on top of run.backend_options.disabled_passes
  double timeout_s = 300.0;
};

/// Checks `backend` against eager in a child process. Throws std::runtime_error when the check
/// itself cannot run (eager fails on the inputs, an invalid model option).
ProbeResult probe_backend(const Model& model, const std::string& backend, const ProbeOptions& options);

}  // namespace gbc
