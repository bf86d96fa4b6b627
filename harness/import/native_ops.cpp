#include "harness/import/native_ops.h"

namespace gbc {
namespace {

std::map<std::string, NativeRule> build() {
  std::map<std::string, NativeRule> t;
  for (const char* u : {"neg", "abs", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid",
                        "relu", "silu", "erf", "reciprocal", "floor", "ceil", "round", "sign", "logical_not"})
    t[std::string("aten::") + u] = {u, {"self"}, {}, {}};
  t["aten::gelu"] = {"gelu", {"self"}, {{"approximate", "approximate"}}, {}};
  for (const char* b : {"mul", "div"}) {
    t[std::string("aten::") + b + ".Tensor"] = {b, {"self", "other"}, {}, {}};
    t[std::string("aten::") + b + ".Scalar"] = {b, {"self", "other"}, {}, {}};
  }
  for (const char* b : {"add", "sub"}) {  // self + alpha * other: the format's add has no alpha
    t[std::string("aten::") + b + ".Tensor"] = {b, {"self", "other"}, {}, {{"alpha", "1"}}};
    t[std::string("aten::") + b + ".Scalar"] = {b, {"self", "other"}, {}, {{"alpha", "1"}}};
  }
  for (const char* b : {"eq", "ne", "lt", "le", "gt", "ge", "remainder"}) {
    t[std::string("aten::") + b + ".Tensor"] = {b, {"self", "other"}, {}, {}};
    t[std::string("aten::") + b + ".Scalar"] = {b, {"self", "other"}, {}, {}};
  }
  for (const char* b : {"maximum", "minimum", "logical_and", "logical_or"})
    t[std::string("aten::") + b] = {b, {"self", "other"}, {}, {}};
  t["aten::pow.Tensor_Tensor"] = {"pow", {"self", "exponent"}, {}, {}};
  t["aten::pow.Tensor_Scalar"] = {"pow", {"self", "exponent"}, {}, {}};
  t["aten::where.self"] = {"where", {"condition", "self", "other"}, {}, {}};
  t["aten::clamp"] = {"clamp", {"self"}, {{"min", "min"}, {"max", "max"}}, {}};
  // ATen's hardtanh is clamp (hardtanh_out calls clamp_out); a traced F.relu6 is hardtanh(0, 6).
  t["aten::hardtanh"] = {"clamp", {"self"}, {{"min_val", "min"}, {"max_val", "max"}}, {}};
  t["aten::relu6"] = {"clamp", {"self"}, {}, {}, {{"min", Scalar::from_int(0)}, {"max", Scalar::from_int(6)}}};
  t["aten::softmax.int"] = {"softmax", {"self"}, {{"dim", "dim"}}, {{"dtype", "None"}}};
  t["aten::log_softmax.int"] = {"log_softmax", {"self"}, {{"dim", "dim"}}, {{"dtype", "None"}}};
  for (const char* r : {"sum", "mean"})
    t[std::string("aten::") + r + ".dim_IntList"] = {r, {"self"}, {{"dim", "dim"}, {"keepdim", "keepdim"}}, {{"dtype", "None"}}};
  for (const char* r : {"amax", "amin"}) t[std::string("aten::") + r] = {r, {"self"}, {{"dim", "dim"}, {"keepdim", "keepdim"}}, {}};
  // To 1x1, ATen's adaptive_avg_pool2d is this mean (its fast path calls input.mean({-1, -2}, true)).
  t["aten::adaptive_avg_pool2d"] = {"mean", {"self"}, {}, {{"output_size", "[1, 1]"}},
                                    {{"dim", std::vector<int64_t>{-1, -2}}, {"keepdim", true}}};
  t["aten::matmul"] = {"matmul", {"self", "other"}, {}, {}};
  t["aten::bmm"] = {"bmm", {"self", "mat2"}, {}, {}};
  t["aten::linear"] = {"linear", {"input", "weight", "bias?"}, {}, {}};
  t["aten::conv2d"] = {"conv2d", {"input", "weight", "bias?"},
                       {{"stride", "stride"}, {"padding", "padding"}, {"dilation", "dilation"}, {"groups", "groups"}}, {}};
  // A traced conv is aten::_convolution; not transposed and with no output padding it is conv2d
  // (a 1-d or 3-d one fails conv2d's type check and stays generic). Imported here rather than
  // rewritten by LibTorch's pass, which drops the node's source range.
  for (const char* name : {"aten::_convolution", "aten::_convolution.deprecated"})
    t[name] = {"conv2d", {"input", "weight", "bias?"},
               {{"stride", "stride"}, {"padding", "padding"}, {"dilation", "dilation"}, {"groups", "groups"}},
               {{"transposed", "False"}, {"output_padding", "[0, 0]"}}};
  t["aten::max_pool2d"] = {"max_pool2d", {"self"},
                           {{"kernel_size", "kernel_size"}, {"stride", "stride"}, {"padding", "padding"},
                            {"dilation", "dilation"}, {"ceil_mode", "ceil_mode"}}, {}};
  t["aten::avg_pool2d"] = {"avg_pool2d", {"self"},
                           {{"kernel_size", "kernel_size"}, {"stride", "stride"}, {"padding", "padding"},
                            {"ceil_mode", "ceil_mode"}, {"count_include_pad", "count_include_pad"},
                            {"divisor_override", "divisor_override"}}, {}};
  // The eager reference calls batch_norm and layer_norm with cudnn enabled, as PyTorch's default does.
  t["aten::batch_norm"] = {"batch_norm", {"input", "weight", "bias", "running_mean", "running_var"},
                           {{"training", "training"}, {"momentum", "momentum"}, {"eps", "eps"}},
                           {{"cudnn_enabled", "True"}}};
  t["aten::layer_norm"] = {"layer_norm", {"input", "weight?", "bias?"},
                           {{"normalized_shape", "normalized_shape"}, {"eps", "eps"}}, {{"cudnn_enable", "True"}}};
  t["aten::reshape"] = {"reshape", {"self"}, {{"shape", "shape"}}, {}};
  t["aten::view"] = {"reshape", {"self"}, {{"size", "shape"}}, {}};
  t["aten::permute"] = {"permute", {"self"}, {{"dims", "dims"}}, {}};
  t["aten::transpose.int"] = {"transpose", {"self"}, {{"dim0", "dim0"}, {"dim1", "dim1"}}, {}};
  t["aten::expand"] = {"expand", {"self"}, {{"size", "size"}}, {{"implicit", "False"}}};
  t["aten::squeeze.dim"] = {"squeeze", {"self"}, {{"dim", "dim"}}, {}};
  t["aten::unsqueeze"] = {"unsqueeze", {"self"}, {{"dim", "dim"}}, {}};
  t["aten::slice.Tensor"] = {"slice", {"self"}, {{"dim", "dim"}, {"start", "start"}, {"end", "end"}, {"step", "step"}}, {}};
  t["aten::flatten.using_ints"] = {"flatten", {"self"}, {{"start_dim", "start_dim"}, {"end_dim", "end_dim"}}, {}};
  t["aten::cat"] = {"cat", {"tensors"}, {{"dim", "dim"}}, {}};
  t["aten::to.dtype"] = {"to", {"self"}, {{"dtype", "dtype"}},
                         {{"non_blocking", "False"}, {"copy", "False"}, {"memory_format", "None"}}};
  return t;
}

}  // namespace

const std::map<std::string, NativeRule>& native_rules() {
  static const std::map<std::string, NativeRule> table = build();
  return table;
}

}  // namespace gbc
