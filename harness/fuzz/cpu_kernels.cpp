#include "harness/fuzz/cpu_kernels.h"

#include <set>

namespace gbc {

bool cpu_kernel_exists(OpId op, DType dtype) {
  // Everything else (add sub mul div pow maximum minimum remainder comparisons where neg abs
  // reciprocal sign logical ops sum mean amax amin var argmax cast views cat full nonzero) has
  // float16 kernels. dropout has one in eval mode only; it is listed as missing altogether.
  static const std::set<OpId> no_float16 = {
      OpId::Exp,    OpId::Log,       OpId::Log1p,      OpId::Expm1,     OpId::Sqrt,       OpId::Rsqrt,
      OpId::Sin,    OpId::Cos,       OpId::Tanh,       OpId::Sigmoid,   OpId::Relu,       OpId::Silu,
      OpId::Erf,    OpId::Floor,     OpId::Ceil,       OpId::Round,     OpId::Gelu,       OpId::Clamp,
      OpId::Prod,   OpId::Logsumexp, OpId::Softmax,    OpId::LogSoftmax, OpId::LayerNorm, OpId::BatchNorm,
      OpId::Matmul, OpId::Linear,    OpId::Bmm,        OpId::Conv2d,    OpId::Dropout,    OpId::MaxPool2d,
      OpId::AvgPool2d, OpId::Hardswish, OpId::Hardsigmoid, OpId::AdaptiveAvgPool2d, OpId::Addmm, OpId::Baddbmm};
  if (dtype == DType::Float16) return no_float16.count(op) == 0;
  if (dtype == DType::BFloat16) return op != OpId::Prod && op != OpId::MaxPool2d && op != OpId::AvgPool2d;
  return true;
}

bool cpu_custom_kernel_exists(const std::string& kernel, DType dtype) {
  static const std::set<std::string> no_float16 = {"scaled_tanh", "row_l2_normalize", "bias_relu"};
  return dtype != DType::Float16 || no_float16.count(kernel) == 0;
}

}  // namespace gbc
