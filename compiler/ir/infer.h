// Result types (dtype and symbolic shape) of nodes, with the user-facing errors for arguments that
// do not fit: "matmul: inner dimensions differ (64 vs 48)". Rules follow ATen (see dtype.h).
// Where ATen's own rules changed between 1.13 and 2.x, the stricter one is enforced here so that a
// valid model means the same on both.
#pragma once

#include <optional>
#include <string>

#include "compiler/ir/graph.h"

namespace gbc {

/// Sets the types of node's outputs from its arguments' types. On an error it reports to diags,
/// marks the outputs Unknown and returns false. Arguments of Unknown type produce no new errors.
bool infer_node_types(Graph& graph, Node& node, Diagnostics& diags);

/// NumPy broadcasting of two symbolic shapes over the graph's dim ranges. On failure returns
/// nullopt and describes the conflicting dims in *conflict ("64 vs 48").
std::optional<SymShape> broadcast_shapes(const DimSpace& dims, const SymShape& a, const SymShape& b,
                                         std::string* conflict);

/// Normalizes a possibly negative dim against a rank; nullopt when out of range.
std::optional<int64_t> normalize_dim(int64_t dim, int64_t rank);

}  // namespace gbc
