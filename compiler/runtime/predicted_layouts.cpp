#include "compiler/runtime/predicted_layouts.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <map>

#include "compiler/aten/aten_convert.h"
#include "compiler/ir/op_schema.h"
#include "compiler/runtime/aten_region.h"

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

// Ops whose meta run could touch state outside the tensors it gets: dropout draws from the
// global generator, custom kernels are user code.
bool runs_on_meta(const Node& node) {
  const OpSchema* schema = find_op_schema(node.op);
  return schema && schema->cls != OpClass::Random && schema->cls != OpClass::Custom;
}

bool is_contiguous(const TensorLayout& t) { return t.strides == contiguous_strides(t.sizes); }

// A value's layout as far as it is known before the call: made by an earlier step, or one of the
// call's tensors.
std::optional<TensorLayout> known_layout(ValueId v, const std::vector<RtValue>& env,
                                         const std::map<ValueId, TensorLayout>& made) {
  if (auto it = made.find(v); it != made.end()) return it->second;
  const RtValue& r = env[static_cast<size_t>(v)];
  if (r.is_scalar() || !r.tensor.defined()) return std::nullopt;
  return TensorLayout{r.tensor.sizes().vec(), r.tensor.strides().vec()};
}

// The layouts an ATen step will give its outputs: the step run on meta tensors (sizes and strides,
// no data) with the known layouts of its inputs. Outputs stay unknown when an input is unknown or
// ATen has no meta kernel for the op.
void predict_aten_step(const Graph& g, const Node& node, const std::vector<RtValue>& env, DimBindings bindings,
                       std::map<ValueId, TensorLayout>& made) {
  if (!runs_on_meta(node)) {
    // dropout's result has its input's shape and, for a contiguous input, is contiguous (ATen
    // returns the input itself or a fresh tensor like it).
    const OpSchema* schema = find_op_schema(node.op);
    if (!schema || schema->cls != OpClass::Random || node.args.empty() || !node.args[0].is_value()) return;
    std::optional<TensorLayout> t = known_layout(node.args[0].value, env, made);
    if (t && is_contiguous(*t)) made[node.output()] = *t;
    return;
  }
  std::vector<RtValue> meta(g.values.size());
  for (const Arg& a : node.args) {
    if (!a.is_value()) continue;
    const size_t v = static_cast<size_t>(a.value);
    if (env[v].is_scalar()) {
      meta[v] = env[v];
      continue;
    }
    std::optional<TensorLayout> t = known_layout(a.value, env, made);
    if (!t) return;
    const at::TensorOptions options = at::TensorOptions().dtype(to_aten(g.type(a.value).dtype)).device(at::kMeta);
    meta[v] = RtValue::of(at::empty_strided(t->sizes, t->strides, options));
  }
  try {
    run_node_on_aten(g, node, meta, bindings, nullptr, c10::Device(c10::kMeta));
  } catch (const std::exception&) {
    return;  // no meta kernel: the kernels reading this step's outputs compile when reached
  }
  for (ValueId v : node.outputs) {
    const at::Tensor& t = meta[static_cast<size_t>(v)].tensor;
    if (t.defined()) made[v] = TensorLayout{t.sizes().vec(), t.strides().vec()};
  }
}

}  // namespace

std::vector<std::optional<std::vector<BufferLayout>>> predict_kernel_layouts(const KernelPlan& plan,
                                                                            const std::vector<RtValue>& env,
                                                                            const DimBindings& bindings) {
  const Graph& g = plan.graph;
  std::vector<std::optional<std::vector<BufferLayout>>> out(plan.kernels.size());
  std::map<ValueId, TensorLayout> made;  // what earlier steps make
  for (const Step& step : plan.partition.steps) {
    if (step.kind != Step::Kind::Kernel) {
      predict_aten_step(g, g.body.nodes[step.index], env, bindings, made);
      continue;
    }
    const LoweredKernel& lk = plan.kernels[step.index];
    std::optional<std::vector<int64_t>> iter = eval_shape(lk.iter_shape, bindings);
    if (!iter) continue;
    // Outputs are known even when an input is not: a later kernel reading them is predictable.
    for (size_t b = 0; b < lk.kernel.buffers.size(); ++b) {
      const ValueId v = lk.buffer_values[b];
      if (!lk.kernel.buffers[b].is_output) continue;
      if (std::optional<std::vector<int64_t>> sizes = eval_shape(g.type(v).shape, bindings))
        made[v] = TensorLayout{*sizes, contiguous_strides(*sizes)};
    }
    std::vector<BufferLayout> layouts;
    for (size_t b = 0; b < lk.kernel.buffers.size(); ++b) {
      std::optional<TensorLayout> t = known_layout(lk.buffer_values[b], env, made);
      if (!t) break;
      layouts.push_back(iteration_layout(lk, b, t->sizes, t->strides, *iter));
    }
    if (layouts.size() == lk.kernel.buffers.size()) out[step.index] = std::move(layouts);
  }
  return out;
}

}  // namespace gbc
