// What `gbcheck check` says when the code under test kills the process (a generated kernel that
// segfaults, a fused op that aborts): instead of a bare "Segmentation fault", the report's header,
// one FAIL line naming the signal, the case that was running and the commands that isolate it
// (reduce, bisect and repro run every check in a child process, harness/sandbox/); with -q only
// the result line; with --json a report that says the process died; the fault banner when a fault
// was injected. Exit code 1, as for any failed check.
// Test: tests/faults/faults_test.cpp (the crash fault).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace gbc {

struct CrashReportSetup {
  std::string model_path;
  std::string backends;   // "nnc, gbc"
  std::string replay;     // the command line that replays a case, without its `--case K`
  std::string header;     // the report's first line, printed before the message
  std::string banner;     // the fault banner, or ""
  bool quiet = false;     // -q: the result line only
  std::string json_path;  // --json, or ""
  nlohmann::json json;    // the report's fields known before the run (schema, model, seed, ...)
};

/// Installs handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT until the process ends.
void install_crash_report(const CrashReportSetup& setup);

/// Names the case now running (a handler may fire at any moment, so the message is formatted
/// here, not in the handler).
void set_crash_case(int case_index);

}  // namespace gbc
