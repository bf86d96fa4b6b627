// One builder per family of ops: each makes a node of the given op from values the GraphBuilder
// has (or fresh inputs it makes), choosing dtypes, shapes and attributes that the op accepts
// (broadcasting partners, reduction dims in range, reshape sizes that multiply out, matmul inner
// dims, conv kernels that fit). A builder returns false when it could not add the op this time;
// helper nodes it added stay (they are valid nodes too). Internal to harness/fuzz; tested through
// tests/fuzz/graph_generator_test.cpp.
#pragma once

#include <string>

#include "harness/fuzz/graph_builder.h"

namespace gbc {

// ops_elementwise.cpp
bool build_unary(GraphBuilder& b, const std::string& op);
bool build_binary(GraphBuilder& b, const std::string& op);
bool build_where(GraphBuilder& b);
bool build_clamp(GraphBuilder& b);
bool build_cast(GraphBuilder& b);
bool build_in_place(GraphBuilder& b, const std::string& op);

// ops_identity.cpp: x - x, x * 0, min(x, x), ... (config.patterns.identity); false for an op
// without identities.
bool build_identity(GraphBuilder& b, const std::string& op);

// ops_aliasing.cpp: an in-place op on a view whose result is unused, then a read of the base
// (config.patterns.view_mutation).
bool build_view_mutation(GraphBuilder& b, const std::string& op);

// ops_reduction.cpp
bool build_reduction(GraphBuilder& b, const std::string& op);
bool build_normalization(GraphBuilder& b, const std::string& op);

// ops_nn.cpp
bool build_extern(GraphBuilder& b, const std::string& op);
bool build_dropout(GraphBuilder& b);
bool build_custom(GraphBuilder& b);

// ops_shape.cpp
bool build_view(GraphBuilder& b, const std::string& op);
bool build_cat(GraphBuilder& b);
bool build_full(GraphBuilder& b);

// ops_breaks.cpp
bool build_print(GraphBuilder& b);
bool build_item(GraphBuilder& b);
bool build_if(GraphBuilder& b);
bool build_nonzero(GraphBuilder& b);

/// Whether shapes a and b broadcast (for every value of the dims) into at most max_rank dims.
bool broadcastable(const GraphBuilder& b, const SymShape& x, const SymShape& y);
/// Whether broadcasting `other` into `self` leaves self's shape as it is (in-place ops, branches).
bool broadcasts_into(const GraphBuilder& b, const SymShape& self, const SymShape& other);
/// The kind of number that promotes with a `dtype` tensor without changing its dtype.
ScalarKind same_kind(DType dtype);

}  // namespace gbc
