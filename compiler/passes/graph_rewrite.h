// Building blocks for passes that rewrite the graph IR: typed nodes made through shape inference
// (types are derived, never written by hand) and substitution of uses. Used by every pass in this
// folder; tested through them (tests/passes/).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace gbc {

using Attrs = std::map<std::string, AttrValue>;

/// A node `op(args, attrs)` at `loc` whose output is a new value named graph.fresh_name(name), typed
/// by infer_node_types. A type error is gbcheck's bug (InternalError), never the user's.
Node make_node(Graph& graph, OpId op, std::vector<Arg> args, Attrs attrs, const SourceLoc& loc,
               const std::string& name);

/// The same, writing into `out`, a value that the replaced node defined. The inferred type must be
/// the one `out` had (same dtype, dims equal for every binding); its spelling is kept, so the types
/// of later nodes still read the same.
Node make_node_into(Graph& graph, ValueId out, OpId op, std::vector<Arg> args, Attrs attrs,
                    const SourceLoc& loc);

/// Replaces every use of a key of `subst` (args, block results, graph outputs) by its value,
/// following chains (a -> b -> c).
void substitute_uses(Graph& graph, const std::map<ValueId, ValueId>& subst);

/// An argument's part in torch.result_type (a number, a host scalar, a 0-d or dimensioned tensor).
PromotionOperand promotion_operand(const Graph& graph, const Arg& arg);

/// Whether two types are the same for every binding of the graph's dims.
bool same_type(const Graph& graph, const ValueType& a, const ValueType& b);

}  // namespace gbc
