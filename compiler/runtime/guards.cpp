#include "compiler/runtime/guards.h"

#include <algorithm>
#include <numeric>

#include "compiler/aten/aten_convert.h"
#include "compiler/runtime/region_graph.h"

namespace gbc {
namespace {

std::string ints_str(c10::IntArrayRef v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The model format's name ("float32") where gbcheck models the dtype, else ATen's.
std::string dtype_words(at::ScalarType t) {
  switch (t) {
    case at::kBool: case at::kByte: case at::kChar: case at::kShort: case at::kInt: case at::kLong:
    case at::kHalf: case at::kBFloat16: case at::kFloat: case at::kDouble: return std::string(dtype_name(from_aten(t)));
    default: return c10::toString(t);
  }
}

std::string layout_words(const TensorGuard& g) { return g.contiguous ? "contiguous" : g.layout; }

std::string layout_words(const at::Tensor& t) {
  return t.is_contiguous() ? "contiguous" : layout_class(t) + " (strides " + ints_str(t.strides()) + ")";
}

}  // namespace

std::string layout_class(const at::Tensor& t) {
  if (t.is_contiguous()) return "contiguous";
  std::vector<int64_t> dims, broadcast;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.size(d) == 1) continue;
    (t.stride(d) == 0 ? broadcast : dims).push_back(d);
  }
  // Largest stride first: the row-major order of the memory.
  std::stable_sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) { return t.stride(a) > t.stride(b); });
  std::string s = "strided(order";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : " ") + std::to_string(dims[i]);
  if (!broadcast.empty()) {
    s += "; broadcast";
    for (size_t i = 0; i < broadcast.size(); ++i) s += (i ? "," : " ") + std::to_string(broadcast[i]);
  }
  return s + ")";
}

DimBindings Guard::static_bindings(const DimSlots& slots) const {
  DimBindings out;
  for (const DimGuard& d : static_dims) out.emplace(slots.name(d.slot), d.value);
  return out;
}

std::map<ValueId, DType> Guard::dtypes_beside(const Graph& graph, const Segment& region) const {
  std::map<ValueId, DType> out;
  for (const TensorGuard& t : tensors) {
    const ValueId v = region.inputs[t.input];
    const DType called = from_aten(t.dtype);
    if (called != graph.type(v).dtype) out.emplace(v, called);
  }
  return out;
}

std::string Guard::str(const DimSlots& slots) const {
  std::string s;
  for (const DimGuard& d : static_dims)
    s += "  " + d.where + " == " + std::to_string(d.value) + "  (dim " + slots.name(d.slot) + ", static)\n";
  for (int d : dynamic_dims) s += "  dim " + slots.name(d) + ": dynamic\n";
  for (const TensorGuard& t : tensors)
    s += "  " + t.name + ": " + dtype_words(t.dtype) + ", " + t.device.str() + ", " + layout_words(t) + "\n";
  return s;
}

Guard make_guard(const Graph& graph, const Segment& region, const std::vector<RtValue>& inputs,
                 const std::vector<int64_t>& dims, const DimSlots& slots, const std::set<int>& dynamic) {
  GBC_INTERNAL_ASSERT(inputs.size() == region.inputs.size(), "make_guard: inputs do not match the region");
  Guard g;
  for (const std::string& name : region_symbols(graph, region)) {
    int s = slots.slot(name);
    GBC_INTERNAL_ASSERT(s >= 0, "make_guard: undeclared dim " + name);
    if (dynamic.count(s)) {
      g.dynamic_dims.push_back(s);
      continue;
    }
    GBC_INTERNAL_ASSERT(dims[static_cast<size_t>(s)] != kUnboundDim, "make_guard: dim " + name + " is unbound");
    DimGuard d{s, dims[static_cast<size_t>(s)], "dim " + name};
    for (ValueId v : region.inputs) {
      const SymShape& shape = graph.type(v).shape;
      auto it = std::find_if(shape.begin(), shape.end(), [&](const DimExpr& e) { return e.is_symbol() && e.name() == name; });
      if (it != shape.end()) {
        d.where = graph.name_of(v) + ".shape[" + std::to_string(it - shape.begin()) + "]";
        break;
      }
    }
    g.static_dims.push_back(std::move(d));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].is_scalar()) continue;
    const at::Tensor& t = inputs[i].tensor;
    TensorGuard tg;
    tg.input = i;
    tg.name = graph.name_of(region.inputs[i]);
    tg.dtype = t.scalar_type();
    tg.device = t.device();
    tg.contiguous = t.is_contiguous();
    if (!tg.contiguous) tg.layout = layout_class(t);
    g.tensors.push_back(std::move(tg));
  }
  return g;
}

bool guard_passes(const Guard& guard, const std::vector<RtValue>& inputs, const std::vector<int64_t>& dims,
                  InjectedFault fault) {
  for (const DimGuard& d : guard.static_dims)
    if (dims[static_cast<size_t>(d.slot)] != d.value) return false;
  for (const TensorGuard& tg : guard.tensors) {
    const at::Tensor& t = inputs[tg.input].tensor;
    if (t.device() != tg.device) return false;
    if (t.scalar_type() != tg.dtype && fault != InjectedFault::GuardDtype) return false;
    if (fault == InjectedFault::GuardLayout) continue;
    if (tg.contiguous ? !t.is_contiguous() : layout_class(t) != tg.layout) return false;
  }
  return true;
}

std::optional<GuardFailure> explain_guard_failure(const Guard& guard, const std::vector<RtValue>& inputs,
                                                  const std::vector<int64_t>& dims) {
  std::optional<GuardFailure> first;
  for (const DimGuard& d : guard.static_dims) {
    int64_t got = dims[static_cast<size_t>(d.slot)];
    if (got == d.value) continue;
    if (!first)
      first = GuardFailure{"RC001", d.where + ": expected " + std::to_string(d.value) + ", got " + std::to_string(got), {}};
    first->changed_dims.push_back(d.slot);
  }
  if (first) return first;
  for (const TensorGuard& tg : guard.tensors) {
    const at::Tensor& t = inputs[tg.input].tensor;
    if (t.device() != tg.device)
      return GuardFailure{"RC004", tg.name + ".device: expected " + tg.device.str() + ", got " + t.device().str(), {}};
    if (t.scalar_type() != tg.dtype)
      return GuardFailure{"RC003",
                          tg.name + ".dtype: expected " + dtype_words(tg.dtype) + ", got " + dtype_words(t.scalar_type()),
                          {}};
    bool same_layout = tg.contiguous ? t.is_contiguous() : layout_class(t) == tg.layout;
    if (!same_layout)
      return GuardFailure{"RC002", tg.name + ": expected a " + layout_words(tg) + " tensor, got " + layout_words(t), {}};
  }
  return std::nullopt;
}

}  // namespace gbc
