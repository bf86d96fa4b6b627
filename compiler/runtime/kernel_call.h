// Calling one lowered kernel (compiler/kernel/lower.h) on tensors, the one way gbc does it: bind
// every kernel buffer to its graph value's tensor (outputs allocated, contiguous in their value's
// shape, on the call's device) and the host scalars to their values, specialize the buffers' index
// kinds for the tensors' layouts (compiler/kernel/specialize.h; again only when a layout changed
// since the previous call), fill GbcKernelArgs, and run native code or the kernel-IR interpreter,
// which an observer may watch node by node. The fused-kernel regions of gbc-interp and gbc call
// kernels this way (kernel_region.h), `gbcheck bisect` watches them through a region, and the
// kernel tests run single groups with it (tests/kernel/kernel_test_util.h).
// Tests: tests/runtime/kernel_call_test.cpp, tests/kernel/interpreter_test.cpp,
// tests/runtime/backends_test.cpp, tests/bisect/bisect_test.cpp.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "compiler/aten/runtime_value.h"
#include "compiler/kernel/kernel_abi.h"
#include "compiler/kernel/lower.h"
#include "compiler/kernel/specialize.h"
#include "compiler/partition/partition.h"

namespace gbc {

/// Runs one compiled kernel: a native CPU function, or a launch on a device.
using KernelFn = std::function<void(const GbcKernelArgs* args)>;

/// A fused kernel as an observer sees it, just before the interpreter runs it.
struct ObservedKernel {
  const Graph& graph;                           // what its nodes belong to (the region's graph)
  std::vector<const Node*> nodes;               // its member nodes, in kernel.node_names order
  const kir::Kernel& kernel;                    // as interpreted: specialized for the call's layouts
  const std::vector<int64_t>& iteration_sizes;  // of iter_shape, in its order
  const std::vector<int>& reduced_dims;         // dims of iter_shape reduced (iterated last), ascending
};

/// Watches kernels that run in the interpreter: every member node's value at every element.
class KernelObserver {
 public:
  virtual ~KernelObserver() = default;
  /// Before each kernel call, also one that writes no element.
  virtual void begin_kernel(const ObservedKernel& kernel) {}
  /// InterpretOptions::observer (interpreter.h): `node` indexes kernel.node_names, `element` is
  /// the linear iteration index.
  virtual void node_value(int node, int64_t element, double value) = 0;
  /// After the call.
  virtual void end_kernel() {}
  /// True once it has seen enough: a region then runs no further step and its outputs are undefined.
  virtual bool done() const { return false; }
};

class KernelCall {
 public:
  /// `kernel` was lowered from `group` of graph.body; the three outlive this object.
  KernelCall(const Graph& graph, const FusionGroup& group, const LoweredKernel& kernel);

  /// Binds every buffer to its value in `env` (indexed by ValueId): inputs as they are, outputs
  /// allocated into env on `device`; host scalars from env too. `dims` binds the shapes' symbols.
  void bind(std::vector<RtValue>& env, const DimBindings& dims, c10::Device device);

  /// The specialization for the bound tensors' layouts. `changed`, when given, tells whether the
  /// layouts differ from those of the previous bind (and the specialization was computed anew).
  const Specialization& specialize(bool* changed = nullptr);

  /// Whether the bound call writes no element (an empty kept dim): run() then runs nothing.
  bool writes_nothing() const;

  /// Runs the bound call of `kernel`, the lowered kernel specialized by specialize(): natively
  /// when `native` is given, else in the interpreter, watched by `observer` when given.
  void run(const kir::Kernel& kernel, const KernelFn& native, int num_threads, KernelObserver* observer = nullptr);

  const LoweredKernel& lowered() const { return kernel_; }
  /// The bound call's iteration sizes and buffers' data pointers (per kernel buffer).
  const std::vector<int64_t>& iter_sizes() const { return iter_; }
  const std::vector<void*>& data() const { return data_; }
  const FusionGroup& group() const { return group_; }

 private:
  const Graph& graph_;
  const FusionGroup& group_;
  const LoweredKernel& kernel_;
  std::vector<at::ScalarType> dtypes_;  // per buffer
  // Sizes known without the call's dims: the iteration sizes and every output's.
  bool static_sizes_ = false;
  std::vector<int64_t> static_iter_;
  std::vector<std::vector<int64_t>> static_out_sizes_;  // per buffer (outputs only)

  // The bound call.
  std::vector<int64_t> iter_;
  std::vector<void*> data_;     // per buffer
  std::vector<double> scalars_;
  bool stream_stores_ = false;  // GbcKernelArgs::stream_stores (stream_stores.h)
  // Every buffer's rank, sizes and strides, then the iteration sizes: equal layouts specialize
  // equally, so the common case (the same layout as before) skips specialize_layouts.
  std::vector<int64_t> layout_, specialized_layout_;
  std::optional<Specialization> spec_;
};

}  // namespace gbc
