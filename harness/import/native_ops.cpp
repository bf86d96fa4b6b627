#include "harness/import/native_ops.h"

namespace gbc {
namespace {

std::map<std::string, std::vector<NativeRule>> build() {
  std::map<std::string, std::vector<NativeRule>> t;
  auto add = [&t](const std::string& key, NativeRule rule) { t[key].push_back(std::move(rule)); };
  for (const char* u : {"neg", "abs", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid",
                        "relu", "silu", "hardswish", "hardsigmoid", "erf", "reciprocal", "floor", "ceil", "round", "sign",
                        "logical_not"})
    add(std::string("aten::") + u, {u, {"self"}, {}, {}});
  add("aten::gelu", {"gelu", {"self"}, {{"approximate", "approximate"}}, {}});
  for (const char* b : {"mul", "div"}) {
    add(std::string("aten::") + b + ".Tensor", {b, {"self", "other"}, {}, {}});
    add(std::string("aten::") + b + ".Scalar", {b, {"self", "other"}, {}, {}});
  }
  for (const char* b : {"add", "sub"}) {  // self + alpha * other: the format's add has no alpha
    add(std::string("aten::") + b + ".Tensor", {b, {"self", "other"}, {}, {{"alpha", "1"}}});
    add(std::string("aten::") + b + ".Scalar", {b, {"self", "other"}, {}, {{"alpha", "1"}}});
  }
  for (const char* b : {"eq", "ne", "lt", "le", "gt", "ge", "remainder"}) {
    add(std::string("aten::") + b + ".Tensor", {b, {"self", "other"}, {}, {}});
    add(std::string("aten::") + b + ".Scalar", {b, {"self", "other"}, {}, {}});
  }
  for (const char* b : {"maximum", "minimum", "logical_and", "logical_or"})
    add(std::string("aten::") + b, {b, {"self", "other"}, {}, {}});
  add("aten::pow.Tensor_Tensor", {"pow", {"self", "exponent"}, {}, {}});
  add("aten::pow.Tensor_Scalar", {"pow", {"self", "exponent"}, {}, {}});
  add("aten::where.self", {"where", {"condition", "self", "other"}, {}, {}});
  // masked_fill is where(mask, value, self), where its result keeps self's dtype and shape (a
  // float value into an integer tensor is truncated by masked_fill, promoted by where: generic).
  for (const char* name : {"aten::masked_fill.Scalar", "aten::masked_fill.Tensor"})
    add(name, {"where", {"mask", "value", "self"}, {}, {}, {}, "self"});
  add("aten::clamp", {"clamp", {"self"}, {{"min", "min"}, {"max", "max"}}, {}});
  // ATen's hardtanh is clamp (hardtanh_out calls clamp_out); a traced F.relu6 is hardtanh(0, 6).
  add("aten::hardtanh", {"clamp", {"self"}, {{"min_val", "min"}, {"max_val", "max"}}, {}});
  add("aten::relu6", {"clamp", {"self"}, {}, {}, {{"min", Scalar::from_int(0)}, {"max", Scalar::from_int(6)}}});
  add("aten::softmax.int", {"softmax", {"self"}, {{"dim", "dim"}}, {{"dtype", "None"}}});
  add("aten::log_softmax.int", {"log_softmax", {"self"}, {{"dim", "dim"}}, {{"dtype", "None"}}});
  for (const char* r : {"sum", "mean"})
    add(std::string("aten::") + r + ".dim_IntList", {r, {"self"}, {{"dim", "dim"}, {"keepdim", "keepdim"}}, {{"dtype", "None"}}});
  for (const char* r : {"amax", "amin"}) add(std::string("aten::") + r, {r, {"self"}, {{"dim", "dim"}, {"keepdim", "keepdim"}}, {}});
  // To 1x1, ATen's adaptive_avg_pool2d is this mean (its fast path calls input.mean({-1, -2}, true)).
  add("aten::adaptive_avg_pool2d", {"mean", {"self"}, {}, {{"output_size", "[1, 1]"}},
                                    {{"dim", std::vector<int64_t>{-1, -2}}, {"keepdim", true}}});
  add("aten::adaptive_avg_pool2d", {"adaptive_avg_pool2d", {"self"}, {{"output_size", "output_size"}}, {}});
  add("aten::matmul", {"matmul", {"self", "other"}, {}, {}});
  add("aten::bmm", {"bmm", {"self", "mat2"}, {}, {}});
  add("aten::linear", {"linear", {"input", "weight", "bias?"}, {}, {}});
  add("aten::addmm", {"addmm", {"self", "mat1", "mat2"}, {{"beta", "beta"}, {"alpha", "alpha"}}, {}});
  add("aten::baddbmm", {"baddbmm", {"self", "batch1", "batch2"}, {{"beta", "beta"}, {"alpha", "alpha"}}, {}});
  // scale_grad_by_freq and sparse change only the gradient.
  add("aten::embedding", {"embedding", {"weight", "indices"}, {{"padding_idx", "padding_idx"}}, {}});
  add("aten::conv2d", {"conv2d", {"input", "weight", "bias?"},
                       {{"stride", "stride"}, {"padding", "padding"}, {"dilation", "dilation"}, {"groups", "groups"}}, {}});
  // A traced conv is aten::_convolution; not transposed and with no output padding it is conv2d
  // (a 1-d or 3-d one fails conv2d's type check and stays generic). Imported here rather than
  // rewritten by LibTorch's pass, which drops the node's source range.
  for (const char* name : {"aten::_convolution", "aten::_convolution.deprecated"})
    add(name, {"conv2d", {"input", "weight", "bias?"},
               {{"stride", "stride"}, {"padding", "padding"}, {"dilation", "dilation"}, {"groups", "groups"}},
               {{"transposed", "False"}, {"output_padding", "[0, 0]"}}});
  add("aten::max_pool2d", {"max_pool2d", {"self"},
                           {{"kernel_size", "kernel_size"}, {"stride", "stride"}, {"padding", "padding"},
                            {"dilation", "dilation"}, {"ceil_mode", "ceil_mode"}}, {}});
  add("aten::avg_pool2d", {"avg_pool2d", {"self"},
                           {{"kernel_size", "kernel_size"}, {"stride", "stride"}, {"padding", "padding"},
                            {"ceil_mode", "ceil_mode"}, {"count_include_pad", "count_include_pad"},
                            {"divisor_override", "divisor_override"}}, {}});
  // The eager reference calls batch_norm and layer_norm with cudnn enabled, as PyTorch's default does.
  add("aten::batch_norm", {"batch_norm", {"input", "weight", "bias", "running_mean", "running_var"},
                           {{"training", "training"}, {"momentum", "momentum"}, {"eps", "eps"}},
                           {{"cudnn_enabled", "True"}}});
  add("aten::layer_norm", {"layer_norm", {"input", "weight?", "bias?"},
                           {{"normalized_shape", "normalized_shape"}, {"eps", "eps"}}, {{"cudnn_enable", "True"}}});
  add("aten::reshape", {"reshape", {"self"}, {{"shape", "shape"}}, {}});
  add("aten::view", {"reshape", {"self"}, {{"size", "shape"}}, {}});
  add("aten::permute", {"permute", {"self"}, {{"dims", "dims"}}, {}});
  add("aten::transpose.int", {"transpose", {"self"}, {{"dim0", "dim0"}, {"dim1", "dim1"}}, {}});
  add("aten::expand", {"expand", {"self"}, {{"size", "size"}}, {{"implicit", "False"}}});
  add("aten::squeeze.dim", {"squeeze", {"self"}, {{"dim", "dim"}}, {}});
  add("aten::unsqueeze", {"unsqueeze", {"self"}, {{"dim", "dim"}}, {}});
  add("aten::slice.Tensor", {"slice", {"self"}, {{"dim", "dim"}, {"start", "start"}, {"end", "end"}, {"step", "step"}}, {}});
  add("aten::flatten.using_ints", {"flatten", {"self"}, {{"start_dim", "start_dim"}, {"end_dim", "end_dim"}}, {}});
  add("aten::cat", {"cat", {"tensors"}, {{"dim", "dim"}}, {}});
  add("aten::to.dtype", {"to", {"self"}, {{"dtype", "dtype"}},
                         {{"non_blocking", "False"}, {"copy", "False"}, {"memory_format", "None"}}});
  return t;
}

}  // namespace

const std::map<std::string, std::vector<NativeRule>>& native_rules() {
  static const std::map<std::string, std::vector<NativeRule>> table = build();
  return table;
}

}  // namespace gbc
