// The generic `aten` op (compiler/ir/generic_op.h) on ATen: the node's schema names an operator of
// the dispatcher (c10::Dispatcher::findSchemaOrThrow), its tensors and attributes become the boxed
// stack in the registered schema's argument order, and callBoxed runs it, as TorchScript's
// interpreter does. The same stack on meta tensors gives the result types at load time (the IR's
// generic op typer, registered by this file). Tests: tests/aten/aten_ops_test.cpp (the generic_*
// cases), tests/import/torchscript_import_test.cpp.
#pragma once

#include <c10/core/Device.h>

#include <vector>

#include "compiler/aten/runtime_value.h"
#include "compiler/ir/generic_op.h"
#include "compiler/ir/graph.h"

namespace gbc {

/// Runs a generic node; one value per result, a Tensor[] result flattened into its elements.
/// Throws std::invalid_argument when the schema is unknown or the attributes do not fit it.
std::vector<RtValue> run_generic_op(const Node& node, const std::vector<RtValue>& args, c10::Device device);

/// The node's result types, by running it on meta tensors (on zero-filled CPU tensors where an
/// operator has no meta kernel); symbolic input dims are tried at the dim space's samples and a
/// result dim must be a constant or follow one input dim. Throws std::invalid_argument.
std::vector<ValueType> infer_generic_op_types(const Graph& graph, const Node& node);

/// The node's effects from the dispatcher's schema (alias annotations) and tags
/// (nondeterministic_seeded); registered as the IR's generic op effects reader.
GenericOpEffects generic_op_effects_of_schema(const Node& node);

}  // namespace gbc
