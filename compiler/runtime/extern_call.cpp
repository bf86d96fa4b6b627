#include "compiler/runtime/extern_call.h"

#include <ATen/Context.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mkldnn_convolution.h>
#include <ATen/ops/mkldnn_reorder_conv2d_weight.h>

#include <algorithm>
#include <limits>

#include "compiler/ir/diagnostics.h"

namespace gbc {
namespace {

// stride/padding/dilation as the node writes them (an int or a pair), as the pair oneDNN needs.
std::vector<int64_t> spatial_pair(const Node& node, const std::string& name, int64_t fallback) {
  std::vector<int64_t> v = node.attr_int_list(name).value_or(std::vector<int64_t>{fallback});
  if (v.size() == 1) v.push_back(v[0]);
  return v;
}

const at::Tensor* tensor_arg(const Node& node, const std::vector<RtValue>& env, size_t i) {
  if (i >= node.args.size() || !node.args[i].is_value()) return nullptr;
  const RtValue& v = env[static_cast<size_t>(node.args[i].value)];
  return v.is_scalar() || !v.tensor.defined() ? nullptr : &v.tensor;
}

// One window offset over a row of outputs, with ATen's rule: a value replaces the maximum when
// larger or NaN. A function of its own, not inlined, so that the pointers are restrict parameters,
// which GCC's vectorizer trusts: inlined in the loop nest below, GCC 12 left the same loop scalar
// (8 ms of resnet18's 224x224 stem pool, about 10% of gbc's run; 3.5% with this).
__attribute__((noinline)) void max_into(float* __restrict__ best, const float* __restrict__ col, int64_t n) {
  for (int64_t ow = 0; ow < n; ++ow) {
    const float v = col[ow], b = best[ow];
    best[ow] = ((v > b) | (v != v)) ? v : b;
  }
}

// max_pool2d of a float32 [N, C, H, W] input as ATen's CPU kernel computes it (cpu_max_pool in
// MaxPoolKernel.cpp: windows clipped to the input, a value replaces the maximum when larger or
// NaN), without the indices ATen computes and this graph never reads: the values are the same,
// bit for bit, in a fifth of the time. The output's size is the node's inferred shape (infer.cpp
// has ATen's pooling_output_shape), bound to this call's dims, so the rule lives in one place.
c10::optional<at::Tensor> max_pool2d(const Graph& graph, const Node& node, const std::vector<RtValue>& env,
                                     const DimBindings& dims) {
  const at::Tensor* in = tensor_arg(node, env, 0);
  if (!in || in->dim() != 4 || !in->device().is_cpu() || in->scalar_type() != at::kFloat ||
      in->layout() != at::kStrided || in->requires_grad() || in->numel() == 0)
    return c10::nullopt;
  std::vector<int64_t> kernel = spatial_pair(node, "kernel_size", 1), padding = spatial_pair(node, "padding", 0),
                       dilation = spatial_pair(node, "dilation", 1);
  std::vector<int64_t> stride = node.attr_int_list("stride").value_or(std::vector<int64_t>{});
  if (stride.empty()) stride = kernel;  // ATen's empty stride: the kernel size
  if (stride.size() == 1) stride.push_back(stride[0]);
  if (kernel.size() != 2 || stride.size() != 2 || padding.size() != 2 || dilation.size() != 2) return c10::nullopt;
  const std::optional<std::vector<int64_t>> shape = eval_shape(graph.type(node.output()).shape, dims);
  if (!shape || shape->size() != 4 || (*shape)[0] != in->size(0) || (*shape)[1] != in->size(1) || (*shape)[2] < 1 ||
      (*shape)[3] < 1)
    return c10::nullopt;  // ATen reports what does not fit
  const int64_t out_size[2] = {(*shape)[2], (*shape)[3]};
  const at::Tensor x = in->contiguous();
  const int64_t planes = x.size(0) * x.size(1), height = x.size(2), width = x.size(3);
  at::Tensor y = at::empty({x.size(0), x.size(1), out_size[0], out_size[1]}, x.options());
  // Each plane padded with -inf to every position a window reaches (a -inf never replaces the
  // maximum, which starts at -inf: this is ATen's clipping) and split by column into the `stride`
  // phases of the output's columns, so that a window offset reads a unit-stride run of outputs:
  // the loop over a row has no bounds to test and no gather, and it vectorizes.
  constexpr float kLowest = -std::numeric_limits<float>::infinity();
  int64_t padded[2];
  for (int k = 0; k < 2; ++k)
    padded[k] = std::max(x.size(2 + k) + 2 * padding[k], (out_size[k] - 1) * stride[k] + (kernel[k] - 1) * dilation[k] + 1);
  const int64_t sw = stride[1], cols = (padded[1] + sw - 1) / sw;
  std::vector<float> phases(static_cast<size_t>(sw * padded[0] * cols));
  const float* src = x.data_ptr<float>();
  float* dst = y.data_ptr<float>();
  for (int64_t p = 0; p < planes; ++p, src += height * width) {
    std::fill(phases.begin(), phases.end(), kLowest);
    for (int64_t j = 0; j < sw; ++j)
      for (int64_t h = 0; h < height; ++h) {
        float* out = phases.data() + (j * padded[0] + h + padding[0]) * cols;
        const float* row = src + h * width;
        // The columns k whose input column w = k * sw + j - padding lies in [0, width).
        const int64_t first = std::max<int64_t>(0, (padding[1] - j + sw - 1) / sw);
        const int64_t last = width - 1 + padding[1] - j;  // negative: no column of this phase is inside
        const int64_t end = last < 0 ? 0 : std::min<int64_t>(cols, last / sw + 1);
        for (int64_t k = first; k < end; ++k) out[k] = row[k * sw + j - padding[1]];
      }
    for (int64_t oh = 0; oh < out_size[0]; ++oh, dst += out_size[1]) {
      float* best = dst;
      std::fill(best, best + out_size[1], kLowest);
      for (int64_t kh = 0; kh < kernel[0]; ++kh) {
        const int64_t ph = oh * stride[0] + kh * dilation[0];
        for (int64_t kw = 0; kw < kernel[1]; ++kw) {
          const int64_t q = kw * dilation[1];
          max_into(best, phases.data() + ((q % sw) * padded[0] + ph) * cols + q / sw, out_size[1]);
        }
      }
    }
  }
  return y;
}

}  // namespace

bool conv2d_on_onednn(const at::Tensor& input, const at::Tensor& weight, const c10::optional<at::Tensor>& bias) {
  auto fits = [](const at::Tensor& t) {
    return t.device().is_cpu() && t.scalar_type() == at::kFloat && t.layout() == at::kStrided && !t.requires_grad() &&
           t.numel() > 0;
  };
  return at::hasMKLDNN() && input.dim() == 4 && weight.dim() == 4 && fits(input) && fits(weight) &&
         (!bias || (bias->dim() == 1 && fits(*bias)));
}

at::Tensor ExternCalls::conv2d(const Node& node, const at::Tensor& input, const at::Tensor& weight,
                               const c10::optional<at::Tensor>& bias) {
  const std::vector<int64_t> stride = spatial_pair(node, "stride", 1), padding = spatial_pair(node, "padding", 0),
                             dilation = spatial_pair(node, "dilation", 1);
  const int64_t groups = node.attr_int("groups", 1);
  if (!ParamCache::TensorState::trackable(weight))  // an inference tensor: no version to trust
    return at::mkldnn_convolution(input, weight, bias, padding, stride, dilation, groups);
  auto it = packed_.find(&node);
  if (it == packed_.end() || !it->second.source.unchanged(weight)) {
    PackedWeight p{ParamCache::TensorState::of(weight),
                   at::mkldnn_reorder_conv2d_weight(weight.contiguous().to_mkldnn(), padding, stride, dilation, groups)};
    it = packed_.insert_or_assign(&node, std::move(p)).first;
  }
  // A dense input with a packed weight gives a dense output, bit-identical to the unpacked call.
  return at::mkldnn_convolution(input, it->second.packed, bias, padding, stride, dilation, groups);
}

void ExternCalls::run(const Graph& graph, const Node& node, std::vector<RtValue>& env, DimBindings& dims,
                      c10::Device device) {
  c10::optional<at::Tensor> y;
  if (device.is_cpu() && node.outputs.size() == 1) {
    if (node.op == OpId::Conv2d) {
      const at::Tensor* input = tensor_arg(node, env, 0);
      const at::Tensor* weight = tensor_arg(node, env, 1);
      const at::Tensor* bias = tensor_arg(node, env, 2);
      const bool args_fit = input && weight && node.args.size() <= 3 && (node.args.size() < 3 || bias);
      c10::optional<at::Tensor> b = bias ? c10::optional<at::Tensor>(*bias) : c10::nullopt;
      if (args_fit && conv2d_on_onednn(*input, *weight, b) && spatial_pair(node, "stride", 1).size() == 2 &&
          spatial_pair(node, "padding", 0).size() == 2 && spatial_pair(node, "dilation", 1).size() == 2)
        y = conv2d(node, *input, *weight, b);
    } else if (node.op == OpId::MaxPool2d) {
      y = max_pool2d(graph, node, env, dims);
    }
  }
  if (!y) return run_node_on_aten(graph, node, env, dims, nullptr, device);
  env[static_cast<size_t>(node.output())] = RtValue::of(std::move(*y));
}

}  // namespace gbc
