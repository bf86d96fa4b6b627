// Guards of a compiled graph: what a compiled entry was specialized on, checked on every call, as
// torch.compile's guards are. An entry pins dtypes, devices and the layout class (contiguous, or the
// order and broadcast pattern of the strides) of every tensor the region reads, and the value of
// every static dim it uses; dynamic dims (check.dynamic: true, or auto after a shape change) are
// only bound. A failing guard names the first mismatch the way users see it
// ("x.shape[0]: expected 16, got 17") with a stable code:
//   RC001 a size changed   RC002 a layout changed   RC003 a dtype changed   RC004 a device changed
// Tests: tests/runtime/guards_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/aten/runtime_value.h"
#include "compiler/kernel/fault_injection.h"
#include "compiler/runtime/capture.h"
#include "compiler/runtime/dim_binding.h"

namespace gbc {

/// "contiguous", or the stride order and broadcast dims ("strided(order 1,0)", "strided(order 0;
/// broadcast 1)"); size-1 dims are left out, since their strides never matter.
std::string layout_class(const at::Tensor& t);

struct DimGuard {
  int slot = -1;
  int64_t value = 0;
  std::string where;  // "x.shape[0]", or "dim B" when no input carries it plainly
};

struct TensorGuard {
  size_t input = 0;  // index into the region's inputs
  std::string name;
  at::ScalarType dtype = at::ScalarType::Float;
  c10::Device device = c10::Device(c10::DeviceType::CPU);
  bool contiguous = true;
  std::string layout;  // layout_class when not contiguous
};

struct Guard {
  std::vector<DimGuard> static_dims;
  std::vector<int> dynamic_dims;  // slots bound per call
  std::vector<TensorGuard> tensors;

  /// The dims pinned by value, by name (what region_graph substitutes).
  DimBindings static_bindings(const DimSlots& slots) const;
  /// The region's inputs whose guarded dtype is not the one the graph declares (a call with other
  /// dtypes than the model's): what region_graph specializes the entry's types on.
  std::map<ValueId, DType> dtypes_beside(const Graph& graph, const Segment& region) const;
  /// One line per guard, for the `guards` log channel.
  std::string str(const DimSlots& slots) const;
};

struct GuardFailure {
  std::string code;     // RC001..RC004
  std::string message;  // "x.shape[0]: expected 16, got 17"
  std::vector<int> changed_dims;  // RC001: every static dim whose value differs
};

/// The guard for a new entry of `region`, from the call that compiles it. `dynamic` holds the slots
/// compiled as symbolic; every other dim the region uses is pinned to its current value.
Guard make_guard(const Graph& graph, const Segment& region, const std::vector<RtValue>& inputs,
                 const std::vector<int64_t>& dims, const DimSlots& slots, const std::set<int>& dynamic);

/// Whether the call (the region's inputs and the call's dims) passes. Fast: comparisons only, except
/// for the layout class of a non-contiguous tensor. `fault` (--inject-fault guard-dtype or
/// guard-layout) skips the dtype or the layout comparison: an entry then serves calls it was not
/// compiled for.
bool guard_passes(const Guard& guard, const std::vector<RtValue>& inputs, const std::vector<int64_t>& dims,
                  InjectedFault fault = InjectedFault::None);

/// The first failing guard, described; nullopt when the call passes.
std::optional<GuardFailure> explain_guard_failure(const Guard& guard, const std::vector<RtValue>& inputs,
                                                  const std::vector<int64_t>& dims);

}  // namespace gbc
