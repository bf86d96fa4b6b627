// gbc's extern calls: the ATen op an Extern step names, with the algorithm gbc picks. conv2d on
// the CPU runs on oneDNN (at::mkldnn_convolution) whatever its shape, its weight reordered into
// oneDNN's blocked layout once and kept while the weight tensor is unchanged (a param: as
// param_cache.h tracks them), not on every call as ATen does; ATen's conv2d also sends an
// unstrided 1x1 conv on one thread to slow_conv2d, a GEMM on the system BLAS (Debian's is the
// reference one: 10 to 40 times slower on MobileNet's pointwise convs). max_pool2d of float32 on
// the CPU is gbc's own loop, bit-identical to ATen's but without the indices ATen computes (a
// fifth of the time). Every other op, and an input these cannot take, runs as eager runs it.
// Tests: tests/runtime/extern_call_test.cpp.
#pragma once

#include <map>

#include "compiler/runtime/aten_region.h"
#include "compiler/runtime/param_cache.h"

namespace gbc {

/// Runs a region's Extern steps, keeping the packed conv weights between calls.
class ExternCalls {
 public:
  /// Runs the Extern step `node` of `graph` and stores its outputs in `env`.
  void run(const Graph& graph, const Node& node, std::vector<RtValue>& env, DimBindings& dims, c10::Device device);

 private:
  struct PackedWeight {
    ParamCache::TensorState source;
    at::Tensor packed;  // an opaque oneDNN tensor
  };
  at::Tensor conv2d(const Node& node, const at::Tensor& input, const at::Tensor& weight, const c10::optional<at::Tensor>& bias);

  std::map<const Node*, PackedWeight> packed_;
};

/// Whether ExternCalls runs this conv2d on oneDNN: float32 on the CPU, 4-d, LibTorch built
/// with it, no autograd on the operands, and no empty tensor.
bool conv2d_on_onednn(const at::Tensor& input, const at::Tensor& weight, const c10::optional<at::Tensor>& bias);

}  // namespace gbc
