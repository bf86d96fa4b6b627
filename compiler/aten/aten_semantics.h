// What the LibTorch gbcheck runs on computes differently from version to version or device to
// device, where the model format leaves the answer to ATen, found out by asking ATen once per device
// type (a probe, not a version table: builds differ). gbc's lowering follows it so that compiled
// kernels compute what eager computes on the same machine.
// Test: tests/aten/aten_ops_test.cpp (AtenSemantics).
#pragma once

#include <c10/core/Device.h>

namespace gbc {

struct AtenSemantics {
  /// A float16/bfloat16 tensor op a Python number (x * 0.1): ATen computes in float32 with the
  /// number as float32 (LibTorch 2.x; CUDA kernels), rather than rounding the number to the
  /// tensor's dtype first (LibTorch 1.13 on the CPU): 1.5 * 0.1 is then 0.15002 in float16, not 0.14990.
  bool half_numbers_in_float32 = false;
};

/// Probed on the first call for each device type (a one-element op there), then cached.
const AtenSemantics& aten_semantics(c10::Device device);

}  // namespace gbc
