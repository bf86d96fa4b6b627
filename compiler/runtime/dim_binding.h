// The dims of one call, by slot: every dim the graph declares gets an index, and a call's sizes live
// in a plain vector instead of a map of names, so that binding them from the inputs and checking
// guards costs a few comparisons per call. Data-dependent dims (nonzero's count) get slots too;
// eager islands bind them. Tests: tests/runtime/guards_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace gbc {

constexpr int64_t kUnboundDim = -1;

class DimSlots {
 public:
  explicit DimSlots(const DimSpace& dims);
  /// -1 for a name the graph does not declare.
  int slot(const std::string& name) const;
  const std::string& name(int slot) const { return names_.at(static_cast<size_t>(slot)); }
  size_t size() const { return names_.size(); }
  /// The bound slots as a map of names, for code that evaluates DimExprs.
  DimBindings bindings(const std::vector<int64_t>& values) const;
  /// Copies every dim of `bindings` into its slot.
  void assign(const DimBindings& bindings, std::vector<int64_t>& values) const;

 private:
  std::vector<std::string> names_;  // sorted
};

/// Binds the graph's dims from its inputs (graph.inputs order). The common case (every input dim a
/// plain symbol or constant) is a loop of comparisons; anything else, and every mismatch, goes
/// through bind_dims, which raises std::invalid_argument with the message eager mode gives.
class InputBinder {
 public:
  InputBinder(const Graph& graph, const DimSlots& slots);
  /// `values` gets size() slots, kUnboundDim where no input binds the dim.
  void bind(const std::vector<at::Tensor>& inputs, std::vector<int64_t>& values) const;

 private:
  struct DimRef {
    size_t input;
    int64_t dim;
    int slot;        // >= 0: a symbol
    int64_t value;   // slot < 0: the constant
  };
  const Graph& graph_;
  const DimSlots& slots_;
  std::vector<DimRef> refs_;
  std::vector<size_t> ranks_;
  bool simple_ = true;  // every input dim is a symbol or a constant
};

}  // namespace gbc
