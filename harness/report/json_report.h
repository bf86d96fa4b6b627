// The machine-readable report written by --json FILE. Schema: docs/json-report.md (versioned by
// the "schema" field; fields are only ever added within a version).
#pragma once

#include <nlohmann/json.hpp>

#include "harness/runner/check_report.h"

namespace gbc {

constexpr const char* kJsonReportSchema = "gbcheck.report/v1";

nlohmann::json check_report_to_json(const CheckReport& report);
nlohmann::json compile_event_to_json(const CompileEvent& event);
/// What a compiled path reported (graphs, breaks, fallbacks, kernels, compiles, compile time and
/// every event), the same keys in the check and the bench reports; callers add their own keys.
nlohmann::json backend_stats_to_json(const BackendStats& stats);
nlohmann::json error_stats_to_json(const ErrorStats& stats);
nlohmann::json verdict_to_json(const Verdict& verdict);
nlohmann::json output_check_to_json(const OutputCheck& check);

/// Writes JSON to a file atomically (a temp file renamed over the target), so a crash never leaves
/// half a report. Throws std::runtime_error when the file cannot be written.
void write_json_file(const std::string& path, const nlohmann::json& json);

}  // namespace gbc
