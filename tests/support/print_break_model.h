// The model both graph-break suites start from: a print between two elementwise ops, so every
// compiler breaks the graph there once (GB001 at line 7, col 5: the print node). Used by
// tests/runtime/capture_test.cpp (the break on each tier) and tests/cli/explain_command_test.cpp
// (the break through `gbcheck explain` and --fullgraph).
#pragma once

namespace gbc::testing {

inline constexpr const char* kPrintBreakModel = R"(format: gbcheck/v1
name: print_break
inputs:
  x: {shape: [4, 3]}
graph:
  - {id: a, op: relu, args: [x]}
  - {op: print, args: [a], message: "after relu"}
  - {id: y, op: exp, args: [a]}
outputs: [y]
check: {cases: 2}
)";

}  // namespace gbc::testing
