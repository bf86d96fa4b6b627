// The structured trace (`--trace DIR`, $GBCHECK_TRACE_DIR): compiler and harness events as JSON
// lines in DIR/trace.jsonl, written as they happen, one write() per line, so a run that is killed
// leaves a readable prefix, and sandboxed children (forked or started with the variable set) append
// to the same file. `gbcheck report DIR` renders it (harness/report/trace_site.h). Schema
// gbcheck.trace/v1: docs/report.md. nlohmann's header only: no spdlog, no fmt (log.h says why).
// Test: tests/report/html_report_test.cpp (TraceReader, TraceCommand).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace gbc::trace {

constexpr const char* kSchema = "gbcheck.trace/v1";
constexpr const char* kFileName = "trace.jsonl";
constexpr const char* kEnvVar = "GBCHECK_TRACE_DIR";

/// Starts tracing into dir (created) and sets $GBCHECK_TRACE_DIR so child processes trace too;
/// writes a `trace_start` event naming the command. Returns "" on success, else why not.
std::string open(const std::string& dir, const std::string& command);
/// Opens $GBCHECK_TRACE_DIR when set and no trace is open (a child process's first event).
void open_from_environment(const std::string& command);
bool enabled();
/// The folder being traced into ("" when off).
std::string directory();
/// Appends {"event": event, "seq", "t_ms", "pid", ...fields} as one line. A no-op when off.
void emit(const std::string& event, nlohmann::json fields = nlohmann::json::object());
/// Writes `trace_end` with the exit code and stops tracing.
void close(int exit_code);

}  // namespace gbc::trace
