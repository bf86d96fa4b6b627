// The generic `aten` op: any ATen operator, named by its full schema string, that the model format
// has no op of its own for (imported TorchScript models use it; docs/model-format.md). Its tensor
// arguments are the node's args, every other argument an attribute named as in the schema. Only
// LibTorch knows its result types, so compiler/aten registers a typer (meta tensors) at start-up;
// without one (torch-free tools) the op is an error. Tests: tests/aten/aten_ops_test.cpp (the
// generic_* cases), tests/import/torchscript_import_test.cpp.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace gbc {

inline constexpr const char* kGenericSchemaAttr = "schema";

bool is_generic_op(const Node& node);
/// "aten::max_pool2d" from the node's schema string (what explain and reports show).
std::string generic_op_name(const Node& node);

/// The name reports and explain show for a node: the ATen name of a generic op, else its op.
std::string op_display_name(const Node& node);

/// What a generic op does besides computing its results, for the passes that merge, move or drop
/// nodes (compiler/passes/effects.h): a write into an argument (an alias annotation with '!',
/// `Tensor(a!) self`), a draw from the random generator (ATen's nondeterministic_seeded tag), a
/// result that may be a view of an argument (`Tensor(a) self -> Tensor(a)`).
struct GenericOpEffects {
  bool mutates = false;
  bool random = false;
  bool returns_alias = false;
};
/// From the registered reader (compiler/aten asks the dispatcher); without one, from the schema
/// string, where a `Generator?` argument marks an op random.
GenericOpEffects generic_op_effects(const Node& node);
using GenericOpEffectsReader = std::function<GenericOpEffects(const Node&)>;
void set_generic_op_effects_reader(GenericOpEffectsReader reader);

/// Returns the types of the node's results from its arguments' types, or throws
/// std::invalid_argument with a message for the user.
using GenericOpTyper = std::function<std::vector<ValueType>(const Graph&, const Node&)>;
void set_generic_op_typer(GenericOpTyper typer);
const GenericOpTyper& generic_op_typer();

}  // namespace gbc
