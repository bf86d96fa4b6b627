// A model graph as JSON for pictures: its inputs, its nodes (id, op, the values each reads, source
// line) and outputs. The trace's `model_loaded` event carries it (docs/report.md); the HTML report
// draws it (graph_svg.h). Test: tests/report/html_report_test.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include "compiler/ir/graph.h"

namespace gbc {

nlohmann::json graph_to_json(const Graph& graph);

}  // namespace gbc
