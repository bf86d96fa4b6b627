// The graph-break rules: which top-level node ends a compiled region, with the stable code, the
// reason and the hint a user sees. One table for every backend on gbc's ladder (trace, decomp,
// gbc-interp, gbc), mirroring what torch.compile's Dynamo breaks on:
//   GB001 print            (unless check.reorderable_logging: the print moves after the graph)
//   GB002 item             (unless check.capture_scalar_outputs: item stays inside the graph)
//   GB003 data-dependent if (unless check.rewrite_if turned it into where; see rewrite_if.h)
//   GB004 nonzero          (the output size depends on the data)
//   GB005 custom without meta (the output type is unknown to the compiler)
//   GB006 in-place mutation of a graph input (or of a value an earlier graph computed)
// docs/graph-breaks.md has a section per code. Tests: tests/runtime/capture_test.cpp.
#pragma once

#include <optional>
#include <string>

#include "compiler/ir/graph.h"
#include "compiler/runtime/compile_event.h"

namespace gbc {

/// torch.compile's knobs that remove graph breaks (check: section of the model).
struct CaptureOptions {
  bool capture_scalar_outputs = false;
  bool reorderable_logging = false;
  bool rewrite_if = false;
};

/// The break `node` causes by its kind alone (GB001..GB005), or nullopt when it can stay inside a
/// compiled region. `if_refusal` is why rewrite_if left an `if` alone ("" when it was off).
/// In-place ops are decided by the capture's alias analysis (input_mutation_break).
std::optional<CompileEvent> graph_break(const Graph& graph, const Node& node, const CaptureOptions& options,
                                        const std::string& if_refusal = "");

/// GB006: `node` writes into `target`, which is (a view of) a graph input when `graph_input`, or
/// else a value computed before the region started (an input of the compiled graph).
CompileEvent input_mutation_break(const Graph& graph, const Node& node, ValueId target, bool graph_input);

/// Whether a print in a compiled region runs after the region instead of breaking it.
bool is_deferred_print(const Node& node, const CaptureOptions& options);

}  // namespace gbc
