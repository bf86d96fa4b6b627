// What `gbcheck check` says when the code under test kills the process (a generated kernel that
// segfaults, a fused op that aborts): instead of a bare "Segmentation fault", one FAIL line naming
// the signal, the case that was running and the commands that isolate it (reduce, bisect and repro
// run every check in a child process, harness/sandbox/). Exit code 1, as for any failed check.
// Test: tests/faults/ (the crash fault).
#pragma once

#include <string>

namespace gbc {

/// Installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT until the process ends.
/// `replay` is the command line that replays a case without its `--case K`.
void install_crash_report(const std::string& model_name, const std::string& backends, const std::string& replay);

/// Names the case now running (a handler may fire at any moment, so the message is formatted
/// here, not in the handler).
void set_crash_case(int case_index);

}  // namespace gbc
