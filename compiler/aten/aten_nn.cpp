// Neural-network ops on ATen: normalizations, the extern ops (matmul linear bmm addmm baddbmm conv2d pools
// embedding), dropout
// and the custom kernels. Each is the ATen call torch.nn.functional makes, with its defaults
// (cudnn enabled for layer_norm and batch_norm, as torch.backends.cudnn.enabled is by default).
#include <ATen/ops/adaptive_avg_pool2d.h>
#include <ATen/ops/addmm.h>
#include <ATen/ops/avg_pool2d.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/batch_norm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/conv2d.h>
#include <ATen/ops/dropout.h>
#include <ATen/ops/embedding.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/max_pool2d.h>
#include <ATen/ops/softmax.h>

#include "compiler/aten/aten_convert.h"
#include "compiler/aten/aten_ops_internal.h"
#include "compiler/aten/custom_kernels.h"
#include "compiler/ir/op_schema.h"

namespace gbc::aten_detail {
namespace {

// An optional trailing tensor argument (weight, bias).
c10::optional<at::Tensor> optional_arg(const OpCall& c, size_t i) {
  if (i < c.num_args()) return c.tensor(i);
  return c10::nullopt;
}

// conv2d's stride/padding/dilation: an int or a list of two, passed on as written (ATen expands
// a single value to both spatial dims, as F.conv2d(stride=2) does).
std::vector<int64_t> pair_attr(const OpCall& c, const std::string& name, int64_t fallback) {
  return c.node.attr_int_list(name).value_or(std::vector<int64_t>{fallback});
}

at::Tensor normalization(const OpCall& c) {
  const at::Tensor& x = c.tensor(0);
  const OpId op = c.op();
  if (op == OpId::Softmax) return at::softmax(x, c.node.attr_int("dim", -1));
  if (op == OpId::LogSoftmax) return at::log_softmax(x, c.node.attr_int("dim", -1));
  if (op == OpId::LayerNorm) {
    std::vector<int64_t> shape = c.shape_attr("normalized_shape");
    return at::layer_norm(x, shape, optional_arg(c, 1), optional_arg(c, 2), c.node.attr_float("eps", 1e-5),
                          /*cudnn_enable=*/true);
  }
  if (op == OpId::BatchNorm) {
    // In training mode ATen updates running_mean and running_var (args 3 and 4) in place; they
    // are the caller's param tensors, so the update is visible after the run, as in PyTorch.
    return at::batch_norm(x, optional_arg(c, 1), optional_arg(c, 2), optional_arg(c, 3), optional_arg(c, 4),
                          c.node.attr_bool("training", false), c.node.attr_float("momentum", 0.1),
                          c.node.attr_float("eps", 1e-5), /*cudnn_enabled=*/true);
  }
  internal_error("aten: '" + op_name(op) + "' is not a normalization");
}

at::Tensor extern_op(const OpCall& c) {
  const OpId op = c.op();
  if (op == OpId::Matmul) return at::matmul(c.tensor(0), c.tensor(1));
  if (op == OpId::Bmm) return at::bmm(c.tensor(0), c.tensor(1));
  if (op == OpId::Linear) return at::linear(c.tensor(0), c.tensor(1), optional_arg(c, 2));
  if (op == OpId::Addmm || op == OpId::Baddbmm) {
    const at::Scalar beta = to_aten(c.node.attr_scalar("beta").value_or(Scalar::from_int(1)));
    const at::Scalar alpha = to_aten(c.node.attr_scalar("alpha").value_or(Scalar::from_int(1)));
    if (op == OpId::Addmm) return at::addmm(c.tensor(0), c.tensor(1), c.tensor(2), beta, alpha);
    return at::baddbmm(c.tensor(0), c.tensor(1), c.tensor(2), beta, alpha);
  }
  if (op == OpId::Embedding) return at::embedding(c.tensor(0), c.tensor(1), c.node.attr_int("padding_idx", -1));
  if (op == OpId::AdaptiveAvgPool2d) {
    std::vector<int64_t> size = pair_attr(c, "output_size", 1);
    if (size.size() == 1) size.push_back(size[0]);  // ATen takes exactly two
    return at::adaptive_avg_pool2d(c.tensor(0), size);
  }
  if (op == OpId::Conv2d) {
    return at::conv2d(c.tensor(0), c.tensor(1), optional_arg(c, 2), pair_attr(c, "stride", 1),
                      pair_attr(c, "padding", 0), pair_attr(c, "dilation", 1), c.node.attr_int("groups", 1));
  }
  if (op == OpId::MaxPool2d || op == OpId::AvgPool2d) {
    // An absent stride is ATen's empty one, which means the kernel size.
    std::vector<int64_t> kernel = pair_attr(c, "kernel_size", 1);
    std::vector<int64_t> stride = c.node.attr_int_list("stride").value_or(std::vector<int64_t>{});
    const bool ceil_mode = c.node.attr_bool("ceil_mode", false);
    if (op == OpId::MaxPool2d)
      return at::max_pool2d(c.tensor(0), kernel, stride, pair_attr(c, "padding", 0), pair_attr(c, "dilation", 1), ceil_mode);
    c10::optional<int64_t> divisor;
    if (c.node.has_attr("divisor_override")) divisor = c.node.attr_int("divisor_override", 1);
    return at::avg_pool2d(c.tensor(0), kernel, stride, pair_attr(c, "padding", 0), ceil_mode,
                          c.node.attr_bool("count_include_pad", true), divisor);
  }
  internal_error("aten: '" + op_name(op) + "' is not an extern op");
}

}  // namespace

at::Tensor run_nn(const OpCall& call) {
  const OpSchema* schema = find_op_schema(call.op());
  switch (schema->cls) {
    case OpClass::Normalization: return normalization(call);
    case OpClass::Extern: return extern_op(call);
    case OpClass::Random:
      // ATen's global generator: the harness seeds it (at::manual_seed) before every run so
      // that the eager and compiled paths draw the same mask.
      return at::dropout(call.tensor(0), call.node.attr_float("p", 0.5), call.node.attr_bool("training", true));
    case OpClass::Custom: return run_custom_kernel(call.node.attr_string("name", ""), call.tensors());
    default: break;
  }
  internal_error("aten: '" + op_name(call.op()) + "' is not an nn op");
}

}  // namespace gbc::aten_detail
