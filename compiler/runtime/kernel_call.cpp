#include "compiler/runtime/kernel_call.h"

#include <ATen/ops/empty.h>

#include <algorithm>

#include "compiler/aten/aten_convert.h"
#include "compiler/ir/diagnostics.h"
#include "compiler/kernel/interpreter.h"
#include "compiler/runtime/stream_stores.h"

namespace gbc {

KernelCall::KernelCall(const Graph& graph, const FusionGroup& group, const LoweredKernel& kernel)
    : graph_(graph), group_(group), kernel_(kernel) {
  std::optional<std::vector<int64_t>> iter = eval_shape(kernel.iter_shape, {});
  static_sizes_ = iter.has_value();
  if (static_sizes_) static_iter_ = *iter;
  for (size_t b = 0; b < kernel.kernel.buffers.size(); ++b) {
    dtypes_.push_back(to_aten(kernel.kernel.buffers[b].dtype));
    std::optional<std::vector<int64_t>> sizes;
    if (kernel.kernel.buffers[b].is_output) {
      sizes = eval_shape(graph.type(kernel.buffer_values[b]).shape, {});
      static_sizes_ = static_sizes_ && sizes.has_value();
    }
    static_out_sizes_.push_back(sizes.value_or(std::vector<int64_t>{}));
  }
}

void KernelCall::bind(std::vector<RtValue>& env, const DimBindings& dims, c10::Device device) {
  const LoweredKernel& lk = kernel_;
  iter_ = static_sizes_ ? static_iter_ : iteration_sizes(lk, dims);
  const size_t nbuf = lk.kernel.buffers.size();
  data_.resize(nbuf);
  layout_.clear();
  int64_t footprint = 0;
  for (size_t b = 0; b < nbuf; ++b) {
    RtValue& slot = env[static_cast<size_t>(lk.buffer_values[b])];
    if (lk.kernel.buffers[b].is_output) {
      std::vector<int64_t> sizes =
          static_sizes_ ? static_out_sizes_[b] : concrete_shape(graph_.type(lk.buffer_values[b]).shape, dims);
      slot = RtValue::of(at::empty(sizes, at::TensorOptions().dtype(dtypes_[b]).device(device)));
    }
    const at::Tensor& t = slot.tensor;
    GBC_INTERNAL_ASSERT(t.defined(), "kernel " + lk.kernel.name + ": buffer '" + graph_.name_of(lk.buffer_values[b]) +
                                         "' has no tensor");
    data_[b] = t.data_ptr();
    footprint += memory_span_bytes(t.sizes().data(), t.strides().data(), t.dim(), static_cast<int64_t>(t.element_size()));
    layout_.push_back(t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) {
      layout_.push_back(t.size(d));
      layout_.push_back(t.stride(d));
    }
  }
  layout_.insert(layout_.end(), iter_.begin(), iter_.end());
  stream_stores_ = device.is_cpu() && stream_stores_pay(footprint);
  scalars_.clear();
  for (ValueId v : lk.scalar_values) {
    const RtValue& r = env[static_cast<size_t>(v)];
    GBC_INTERNAL_ASSERT(r.is_scalar(), "kernel " + lk.kernel.name + ": '" + graph_.name_of(v) + "' is not a host scalar");
    scalars_.push_back(r.scalar->to_double());
  }
}

const Specialization& KernelCall::specialize(bool* changed) {
  const bool recompute = !spec_ || layout_ != specialized_layout_;
  if (changed) *changed = recompute;
  if (!recompute) return *spec_;
  std::vector<BufferLayout> layouts;
  layouts.reserve(data_.size());
  size_t at = 0;
  for (size_t b = 0; b < data_.size(); ++b) {
    const size_t rank = static_cast<size_t>(layout_[at++]);
    std::vector<int64_t> sizes(rank), strides(rank);
    for (size_t d = 0; d < rank; ++d) {
      sizes[d] = layout_[at++];
      strides[d] = layout_[at++];
    }
    layouts.push_back(iteration_layout(kernel_, b, sizes, strides, iter_));
  }
  spec_ = specialize_layouts(kernel_, layouts);
  specialized_layout_ = layout_;
  return *spec_;
}

bool KernelCall::writes_nothing() const {
  for (size_t d = 0; d < iter_.size(); ++d) {
    bool reduced = std::find(kernel_.reduced_dims.begin(), kernel_.reduced_dims.end(), static_cast<int>(d)) !=
                   kernel_.reduced_dims.end();
    if (!reduced && iter_[d] == 0) return true;
  }
  return false;
}

void KernelCall::run(const kir::Kernel& kernel, const KernelFn& native, int num_threads, KernelObserver* observer) {
  GBC_INTERNAL_ASSERT(spec_.has_value(), "kernel " + kernel.name + ": run before specialize");
  GBC_INTERNAL_ASSERT(!(observer && native), "kernel " + kernel.name + ": only the interpreter can be observed");
  if (observer) {
    ObservedKernel seen{graph_, {}, kernel, iter_, kernel_.reduced_dims};
    for (size_t n : group_.nodes) seen.nodes.push_back(&graph_.body.nodes.at(n));
    observer->begin_kernel(seen);
  }
  if (!writes_nothing()) {
    KernelArgs args(kernel_, *spec_, data_, iter_, scalars_, num_threads);
    args.set_stream_stores(stream_stores_);
    if (native) {
      native(args.get());
    } else {
      InterpretOptions io;
      if (observer) io.observer = [observer](int node, int64_t element, double value) { observer->node_value(node, element, value); };
      interpret_kernel(kernel, *args.get(), io);
    }
  }
  if (observer) observer->end_kernel();
}

}  // namespace gbc
