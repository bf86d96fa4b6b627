// What a gbc tier built (GraphRuntime::describe) as JSON: the compiled graphs with their nodes and
// source lines, the steps (fused kernels, extern calls, ATen steps) with the model nodes each
// computes, the guards of every entry, and the graph breaks between graphs. `explain --json` and
// the trace's `program` event (docs/report.md) write it; the HTML report draws from it.
// Test: tests/cli/explain_command_test.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/runtime/graph_runtime.h"

namespace gbc {

/// {"file", "line", "col"[, "python"]}, or null for no location.
nlohmann::json source_loc_json(const SourceLoc& loc);
/// The model nodes a step computes ("a", "y"), matched by name or, for nodes a pass made, by location.
std::vector<std::string> step_model_nodes(const SegmentDescription& seg, const StepDescription& step);
/// The "program" array of docs/json-report.md's explain schema.
nlohmann::json program_to_json(const ProgramDescription& program);
/// Traces what a backend built (`program` event, docs/report.md), when tracing and when the backend
/// describes its graphs (gbc's tiers).
void trace_program(const std::string& backend_name, const Backend& backend);

}  // namespace gbc
