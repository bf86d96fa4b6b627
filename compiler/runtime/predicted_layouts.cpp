#include "compiler/runtime/predicted_layouts.h"

#include <algorithm>
#include <map>

namespace gbc {
namespace {

struct TensorLayout {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

// at::empty's strides: row-major, with size-0 and size-1 dims counted as 1.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= std::max<int64_t>(sizes[d], 1);
  }
  return strides;
}

}  // namespace

std::vector<std::optional<std::vector<BufferLayout>>> predict_kernel_layouts(const KernelPlan& plan,
                                                                            const std::vector<RtValue>& env,
                                                                            const DimBindings& bindings) {
  const Graph& g = plan.graph;
  std::vector<std::optional<std::vector<BufferLayout>>> out(plan.kernels.size());
  std::map<ValueId, TensorLayout> made;  // kernel outputs of earlier steps
  for (const Step& step : plan.partition.steps) {
    if (step.kind != Step::Kind::Kernel) continue;
    const LoweredKernel& lk = plan.kernels[step.index];
    std::optional<std::vector<int64_t>> iter = eval_shape(lk.iter_shape, bindings);
    if (!iter) continue;
    std::vector<BufferLayout> layouts;
    for (size_t b = 0; b < lk.kernel.buffers.size() && iter; ++b) {
      const ValueId v = lk.buffer_values[b];
      TensorLayout t;
      if (lk.kernel.buffers[b].is_output) {
        std::optional<std::vector<int64_t>> sizes = eval_shape(g.type(v).shape, bindings);
        if (!sizes) break;
        t.sizes = *sizes;
        t.strides = contiguous_strides(t.sizes);
        made[v] = t;
      } else if (auto it = made.find(v); it != made.end()) {
        t = it->second;
      } else if (const RtValue& r = env[static_cast<size_t>(v)]; !r.is_scalar() && r.tensor.defined()) {
        t.sizes = r.tensor.sizes().vec();
        t.strides = r.tensor.strides().vec();
      } else {
        break;
      }
      layouts.push_back(iteration_layout(lk, b, t.sizes, t.strides, *iter));
    }
    if (layouts.size() == lk.kernel.buffers.size()) out[step.index] = std::move(layouts);
  }
  return out;
}

}  // namespace gbc
