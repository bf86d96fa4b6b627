// A region run op by op on ATen: what trace (the captured region) and decomp (the region after the
// graph pipeline) compile to, and what every tier runs when a region falls back to eager. Prints in
// a region (check.reorderable_logging) format their values at their place in the program, so they
// show what eager mode shows even if an in-place op changes a value later, and reach the sink after
// the region has run. Tests: tests/runtime/backends_test.cpp.
#pragma once

#include <memory>

#include "compiler/runtime/region_executable.h"

namespace gbc {

std::unique_ptr<RegionExecutable> make_aten_region(Graph graph);

/// Runs one node of `graph` on ATen with the values of `env` (indexed by ValueId) and stores its
/// outputs there: the step every tier uses for ops it leaves to ATen.
void run_node_on_aten(const Graph& graph, const Node& node, std::vector<RtValue>& env, DimBindings& dims,
                      std::ostream* print_sink, c10::Device device);

}  // namespace gbc
