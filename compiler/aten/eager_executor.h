// The eager reference: runs the graph IR op by op on ATen, exactly as a PyTorch user's eager
// program would (including print, item, data-dependent if, nonzero, in-place mutation of inputs
// and the running-stat updates of batch_norm in training mode). Every compiled path is judged
// against it, and compiled paths use it for their eager islands and fallbacks.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <vector>

#include "compiler/aten/runtime_value.h"
#include "compiler/ir/graph.h"

namespace gbc {

/// An op raised while running (an ATen error, or a data-dependent failure such as a non-boolean
/// condition value). Carries the node's location; what() reads "file:line:col: op: message".
class OpError : public std::runtime_error {
 public:
  OpError(const Node& node, const std::string& message);
  const SourceLoc& loc() const { return loc_; }
  const std::string& op() const { return op_; }
  /// The message alone, without location and op.
  const std::string& message() const { return message_; }

 private:
  SourceLoc loc_;
  std::string op_;
  std::string message_;
};

struct EagerOptions {
  /// Called after each node with each value it defines (for the bisector's intermediate values).
  std::function<void(const Node&, ValueId, const RtValue&)> on_value;
  /// Where `print` writes; nullptr discards (the harness captures it to report side effects).
  std::ostream* print_sink = nullptr;
  /// Where tensors the graph creates (full) go. Unset: run_eager uses the first input's device
  /// (CPU when there are no inputs), run_block the device of the first tensor in its environment.
  std::optional<c10::Device> device;
};

/// Binds the model's dims to sizes from the input tensors (graph.inputs order). Throws
/// std::invalid_argument when a tensor's rank or a size contradicts the graph (e.g. the same dim
/// bound to two sizes).
DimBindings bind_dims(const Graph& graph, const std::vector<at::Tensor>& inputs);

/// Runs one node (not `if`, which needs blocks: use run_block). `args` has one entry per node arg
/// (numbers written in the model as RtValue scalars). Returns the node's value (none for print).
/// `bindings` gains the sizes of data-dependent dims (nonzero). `device` is where a node without
/// tensor arguments (full) creates its result. Any failure, ATen's included, is an OpError.
std::vector<RtValue> run_aten_node(const Graph& graph, const Node& node, const std::vector<RtValue>& args,
                                   DimBindings& bindings, std::ostream* print_sink,
                                   c10::Device device = c10::Device(c10::DeviceType::CPU));

/// Runs the whole graph. `inputs` follow graph.inputs (inputs, then params); graph inputs that the
/// model mutates (add_, mul_, batch_norm running stats) are mutated in place, as in PyTorch.
std::vector<at::Tensor> run_eager(const Graph& graph, const std::vector<at::Tensor>& inputs,
                                  const EagerOptions& options = {});

/// Runs a block with an environment of already-computed values (values indexed by ValueId).
void run_block(const Graph& graph, const Block& block, std::vector<RtValue>& env, DimBindings& bindings,
               const EagerOptions& options);

}  // namespace gbc
