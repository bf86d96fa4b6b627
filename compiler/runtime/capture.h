// Capture: splits the model's graph (its top-level block) into compiled regions and the eager
// islands between them, as torch.compile's Dynamo splits a function at its graph breaks. A region
// is a maximal run of nodes that a compiled graph can hold; an island is one node that breaks the
// graph (graph_breaks.h) and runs eagerly on ATen, exactly as in eager mode (an `if` island runs
// its taken branch op by op). With check.rewrite_if, pure ifs are first rewritten into where
// (rewrite_if.h); with check.reorderable_logging, prints stay in their region and run after it.
// Tests: tests/runtime/capture_test.cpp.
#pragma once

#include <vector>

#include "compiler/ir/graph.h"
#include "compiler/runtime/compile_event.h"
#include "compiler/runtime/graph_breaks.h"

namespace gbc {

struct Segment {
  enum class Kind { Region, Island };
  Kind kind = Kind::Region;
  // Region: indices into CapturedProgram::graph.body.nodes, program order (deferred prints
  // included). Island: the one breaking node.
  std::vector<size_t> nodes;
  std::vector<ValueId> inputs;   // Region: values it reads that are defined before it, first use first
  std::vector<ValueId> outputs;  // Region: values it defines that later segments or the graph return
  int region = -1;               // Region: its number (graph 0, 1, ...)
  CompileEvent graph_break;      // Island: why the graph breaks here
  Block island;                  // Island: the node as a block of its own, for run_block
};

struct CapturedProgram {
  Graph graph;  // the model's graph after capture rewrites; segments index its top-level block
  std::vector<Segment> segments;
  std::vector<CompileEvent> breaks;    // one per island, program order
  std::vector<SourceLoc> rewritten_ifs;  // ifs that rewrite_if turned into where
  int num_regions = 0;
};

CapturedProgram capture_graph(const Graph& graph, const CaptureOptions& options);

}  // namespace gbc
