// A graph called with other input dtypes than it declares (an input's `dtypes:` alternatives, or a
// compiled entry specialized on a call's dtypes): the inputs take the new dtypes and every node's
// result type is inferred again, in program order, with infer_node_types's rules and errors.
// Test: tests/ir/retype_test.cpp.
#pragma once

#include <map>

#include "compiler/ir/diagnostics.h"
#include "compiler/ir/graph.h"

namespace gbc {

/// Gives each value of `dtypes` (graph inputs) its dtype and re-infers every node, nested blocks
/// first. False, with the first op that rejects the new types in diags, when some node does not fit.
bool retype_graph(Graph& graph, const std::map<ValueId, DType>& dtypes, Diagnostics& diags);

}  // namespace gbc
