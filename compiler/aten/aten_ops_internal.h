// Internal to compiler/aten: what the per-family op files (aten_elementwise.cpp,
// aten_reductions.cpp, aten_nn.cpp, aten_shape.cpp) share. run_aten_node (aten_ops.cpp) builds
// one OpCall per node and hands it to the family's function; each family file then reads its
// arguments and attributes through OpCall so that argument checks and errors look the same
// everywhere.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/Scalar.h>

#include <string>
#include <vector>

#include "compiler/aten/runtime_value.h"
#include "compiler/ir/graph.h"

namespace gbc::aten_detail {

/// One node about to run: its arguments (numbers and host scalars as RtValue scalars), the dim
/// bindings for symbolic shapes, and the device that tensors the node creates go on.
class OpCall {
 public:
  OpCall(const Graph& graph, const Node& node, const std::vector<RtValue>& args, DimBindings& bindings,
         c10::Device device)
      : graph(graph), node(node), args(args), bindings(bindings), device_(device) {}

  const Graph& graph;
  const Node& node;
  const std::vector<RtValue>& args;
  DimBindings& bindings;

  OpId op() const { return node.op; }
  size_t num_args() const { return args.size(); }
  /// A number written in the model or a host scalar from `item`.
  bool is_number(size_t i) const;
  /// Argument i as a tensor; OpError when it is a number (the frontend rejects that, so this
  /// only fires for graphs built by hand).
  const at::Tensor& tensor(size_t i) const;
  c10::Scalar number(size_t i) const;
  /// Argument i as a tensor; a number becomes a wrapped-number 0-d tensor (as ATen's own
  /// Tensor-Scalar overloads make it), so type promotion treats it as a Python number.
  at::Tensor tensor_or_wrapped(size_t i) const;
  /// Every argument as a tensor (cat, custom).
  std::vector<at::Tensor> tensors() const;
  /// Where created tensors go: the device of the node's first tensor argument, else the
  /// executor's device.
  c10::Device device() const;
  /// A Shape attribute evaluated with the bindings (symbolic dims allowed).
  std::vector<int64_t> shape_attr(const std::string& name) const;

  /// A data-dependent failure at this node.
  [[noreturn]] void fail(const std::string& message) const;

 private:
  c10::Device device_;
};

/// A number as a wrapped-number 0-d tensor on `device` (ATen's wrapped_scalar_tensor).
at::Tensor wrapped_number(const c10::Scalar& s, c10::Device device);

// One function per op family; each returns the node's single result.
at::Tensor run_elementwise(const OpCall& call);  // Unary, Binary, Where, Clamp, Cast, InPlace
at::Tensor run_reduction(const OpCall& call);    // Reduction
at::Tensor run_nn(const OpCall& call);           // Normalization, Extern, Random, Custom
at::Tensor run_shape(const OpCall& call);        // View, Cat, Creation

}  // namespace gbc::aten_detail
