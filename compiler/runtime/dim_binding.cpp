#include "compiler/runtime/dim_binding.h"

#include <algorithm>
#include <stdexcept>

#include "compiler/aten/eager_executor.h"

namespace gbc {

DimSlots::DimSlots(const DimSpace& dims) {
  for (const auto& [name, range] : dims.ranges()) names_.push_back(name);
}

int DimSlots::slot(const std::string& name) const {
  auto it = std::lower_bound(names_.begin(), names_.end(), name);
  return it != names_.end() && *it == name ? static_cast<int>(it - names_.begin()) : -1;
}

DimBindings DimSlots::bindings(const std::vector<int64_t>& values) const {
  DimBindings out;
  for (size_t i = 0; i < names_.size() && i < values.size(); ++i)
    if (values[i] != kUnboundDim) out.emplace(names_[i], values[i]);
  return out;
}

void DimSlots::assign(const DimBindings& bindings, std::vector<int64_t>& values) const {
  for (const auto& [name, value] : bindings) {
    int s = slot(name);
    if (s >= 0) values[static_cast<size_t>(s)] = value;
  }
}

InputBinder::InputBinder(const Graph& graph, const DimSlots& slots) : graph_(graph), slots_(slots) {
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const SymShape& shape = graph.type(graph.inputs[i].value).shape;
    ranks_.push_back(shape.size());
    for (size_t k = 0; k < shape.size(); ++k) {
      const DimExpr& e = shape[k];
      if (e.is_symbol()) {
        refs_.push_back({i, static_cast<int64_t>(k), slots.slot(e.name()), 0});
      } else if (e.is_const()) {
        refs_.push_back({i, static_cast<int64_t>(k), -1, e.value()});
      } else {
        simple_ = false;
      }
    }
  }
}

void InputBinder::bind(const std::vector<at::Tensor>& inputs, std::vector<int64_t>& values) const {
  values.assign(slots_.size(), kUnboundDim);
  bool ok = simple_ && inputs.size() == ranks_.size();
  for (size_t i = 0; ok && i < inputs.size(); ++i)
    ok = inputs[i].defined() && static_cast<size_t>(inputs[i].dim()) == ranks_[i];
  for (size_t r = 0; ok && r < refs_.size(); ++r) {
    const DimRef& ref = refs_[r];
    int64_t size = inputs[ref.input].size(ref.dim);
    if (ref.slot < 0) {
      ok = size == ref.value;
    } else {
      int64_t& v = values[static_cast<size_t>(ref.slot)];
      if (v == kUnboundDim) v = size;
      ok = v == size;
    }
  }
  if (ok) return;
  // The slow path names the problem exactly as eager mode does (or binds compound dims).
  DimBindings b = bind_dims(graph_, inputs);
  values.assign(slots_.size(), kUnboundDim);
  slots_.assign(b, values);
}

}  // namespace gbc
