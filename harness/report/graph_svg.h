// A picture of a model graph, drawn by gbcheck itself as SVG (no layout service): a layered layout,
// top to bottom (each node one layer below the deepest value it reads; inputs and params just
// above their first reader), edges as curves, nodes coloured by what ran them: each fused kernel
// its own colour, extern (ATen library) calls orange, graph breaks red, ATen/eager steps grey.
// Every label goes through html::escape. Test: tests/report/html_report_test.cpp.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gbc {

/// How a node ran: "kernel-N" (the N-th fused kernel), "extern", "break", "aten", "input", "param".
using NodeClasses = std::map<std::string, std::string>;

/// The SVG element for a graph in graph_to_json's form; nodes missing from `classes` are "aten".
std::string graph_svg(const nlohmann::json& graph, const NodeClasses& classes);
/// The legend for the classes a picture uses (HTML).
std::string graph_legend(const NodeClasses& classes);

}  // namespace gbc
