// The generic `aten` op: any ATen operator, named by its full schema string, that the model format
// has no op of its own for (imported TorchScript models use it; docs/model-format.md). Its tensor
// arguments are the node's args, every other argument an attribute named as in the schema. Only
// LibTorch knows its result types, so compiler/aten registers a typer (meta tensors) at start-up;
// without one (torch-free tools) the op is an error. Test: tests/aten/generic_op_test.cpp.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace gbc {

inline constexpr const char* kGenericOp = "aten";
inline constexpr const char* kGenericSchemaAttr = "schema";

bool is_generic_op(const Node& node);
/// "aten::max_pool2d" from the node's schema string (what explain and reports show).
std::string generic_op_name(const Node& node);

/// Returns the types of the node's results from its arguments' types, or throws
/// std::invalid_argument with a message for the user.
using GenericOpTyper = std::function<std::vector<ValueType>(const Graph&, const Node&)>;
void set_generic_op_typer(GenericOpTyper typer);
const GenericOpTyper& generic_op_typer();

}  // namespace gbc
