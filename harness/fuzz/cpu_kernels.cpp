#include "harness/fuzz/cpu_kernels.h"

#include <set>

namespace gbc {

bool cpu_kernel_exists(const std::string& op, DType dtype) {
  // Everything else (add sub mul div pow maximum minimum remainder comparisons where neg abs
  // reciprocal sign logical ops sum mean amax amin var argmax cast views cat full nonzero) has
  // float16 kernels. dropout has one in eval mode only; it is listed as missing altogether.
  static const std::set<std::string> no_float16 = {
      "exp",    "log",         "log1p",     "expm1",      "sqrt",        "rsqrt",      "sin",     "cos",
      "tanh",   "sigmoid",     "relu",      "silu",       "erf",         "floor",      "ceil",    "round",
      "gelu",   "clamp",       "prod",      "logsumexp",  "softmax",     "log_softmax", "layer_norm", "batch_norm",
      "matmul", "linear",      "bmm",       "conv2d",     "dropout",     "scaled_tanh", "row_l2_normalize",
      "bias_relu",  "max_pool2d", "avg_pool2d"};
  if (dtype == DType::Float16) return no_float16.count(op) == 0;
  if (dtype == DType::BFloat16) return op != "prod" && op != "max_pool2d" && op != "avg_pool2d";
  return true;
}

}  // namespace gbc
