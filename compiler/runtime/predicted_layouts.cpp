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
    const ValueId in = node.args[0].value;
    std::optional<TensorLayout> t;
    if (auto it = made.find(in); it != made.end()) t = it->second;
    else if (const at::Tensor& x = env[static_cast<size_t>(in)].tensor; x.defined()) t = TensorLayout{x.sizes().vec(), x.strides().vec()};
    if (t && is_contiguous(*t)) made[node.output()] = *t;
    return;
  }
  std::vector<RtValue> meta(g.values.size());
  for (const Arg& a : node.args) {
    if (!a.is_value()) continue;
    const size_t v = static_cast<size_t>(a.value);
    const RtValue& r = env[v];
    const TensorLayout* t = nullptr;
    if (auto it = made.find(a.value); it != made.end()) t = &it->second;
    if (r.is_scalar()) {
      meta[v] = r;
      continue;
    }
    const at::TensorOptions options = at::TensorOptions().dtype(to_aten(g.type(a.value).dtype)).device(at::kMeta);
    if (t) meta[v] = RtValue::of(at::empty_strided(t->sizes, t->strides, options));
    else if (r.tensor.defined()) meta[v] = RtValue::of(at::empty_strided(r.tensor.sizes(), r.tensor.strides(), options));
    else return;
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
      const ValueId v = lk.buffer_values[b];
      TensorLayout t;
      if (auto it = made.find(v); it != made.end()) {
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
