// The edits the reducer tries on a model, each on a ReductionSubject: a model together with the
// failing values of its graph inputs. An edit changes the IR in place (node removal with
// substitution, dead-code removal, outputs, dims, dtypes, attributes, values); `rebuild` then
// writes the model as YAML and loads it back, so that every candidate is a valid model.yaml with
// freshly inferred types, or a ModelError (the candidate is dropped without running anything).
// Inputs keep the failing case's memory layout beside their values (ReductionSubject::layouts).
// Test: tests/reduce/model_edits_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/inputs/tensor_layout.h"
#include "harness/model/model.h"

namespace gbc {

struct ReductionSubject {
  Model model;
  std::map<std::string, at::Tensor> values;  // each input's and param's failing values, by name, contiguous
  // The inputs the failing case had as views (transposed, sliced, expanded), by name: edits work
  // on the contiguous values, and the checks get them laid out this way again.
  std::map<std::string, LayoutPlan> layouts;

  /// The values in graph.inputs order (inputs, then params), each in its layout where it fits.
  std::vector<at::Tensor> inputs() const;
  /// The layout input `name` gets: its entry in `layouts` where it still fits the values (a halved
  /// dim is re-planned; an expanded dim whose values differ falls back to Contiguous).
  LayoutPlan layout(const std::string& name) const;
  /// Drops the layouts of inputs that are gone or whose layout no longer fits.
  void drop_unfit_layouts();
  int node_count() const { return static_cast<int>(model.graph.node_count()); }
};

/// Writes the model and loads it back. Throws ModelError when the edited model is invalid.
Model rebuild(const Model& edited);

/// Fixes every dim the inputs declare to its size in `values` (dims: {B: 7}): a reduction works on
/// one failing case, and halving a dim needs a single size.
void pin_dims(ReductionSubject& subject);

/// How remove_nodes replaces a removed node's value where later nodes or the outputs use it.
enum class Removal {
  /// By a new graph input holding the value it had (`eager_values`): later nodes see the real
  /// values, but they no longer depend on what came before (right upstream of a bug). Outputs and
  /// in-place ops are bypassed as with Bypass.
  Cut,
  /// By one of the node's own arguments of the same dtype and shape, else as Cut: keeps what
  /// follows connected to what came before (right downstream of a bug).
  Bypass,
};

/// Removes the top-level nodes at `indices`, replacing their values as `how` says; an output that
/// can be neither bypassed nor cut is dropped while other outputs remain. Then removes dead code.
/// Returns false when no node could be removed.
bool remove_nodes(ReductionSubject& subject, const std::vector<size_t>& indices,
                  const std::map<ValueId, at::Tensor>& eager_values, Removal how = Removal::Cut);

/// Removes nodes nothing uses (keeping side effects: print, in-place, dropout, ...) and the inputs
/// and params no node or output reads.
void remove_dead_code(ReductionSubject& subject);

/// Top-level nodes that remove_nodes may remove (those without host-scalar outputs).
std::vector<size_t> removable_nodes(const Model& model);

/// Replaces the outputs; then removes dead code.
void set_outputs(ReductionSubject& subject, const std::vector<ValueId>& outputs);

/// Which half of an axis a halving keeps.
enum class Half { Lower, Upper };

/// Halves dim `name` (declared by the inputs), slicing the inputs along it. False if not possible.
bool halve_dim(ReductionSubject& subject, const std::string& name, Half keep = Half::Lower);
/// Halves every input and param axis of literal size `size`. False if none has it.
bool halve_literal_size(ReductionSubject& subject, int64_t size, Half keep = Half::Lower);
/// Literal sizes > 1 that input and param shapes use, largest first.
std::vector<int64_t> literal_sizes(const Model& model);

/// The dtype an input's dtype simplifies to (float32 for floats, int64 for integers), if simpler.
std::optional<DType> simpler_dtype(DType dtype);
/// Changes input or param `name` to `dtype`, converting its values.
void set_input_dtype(ReductionSubject& subject, const std::string& name, DType dtype);

/// Strictly simpler versions of an attribute value (0 before 1 before anything else; false before
/// true), most aggressive first; none for 0 and false.
std::vector<AttrValue> simpler_attrs(const AttrValue& value);
/// Strictly simpler versions of a number argument, in the same order.
std::vector<Scalar> simpler_scalars(const Scalar& value);

/// The eager value of every top-level node output on the subject's inputs (host scalars left out).
std::map<ValueId, at::Tensor> eager_values(const ReductionSubject& subject);

/// The single value all elements share, when they do and it is finite.
std::optional<double> constant_value(const at::Tensor& t);

}  // namespace gbc
