// What the LibTorch gbcheck runs on computes differently from version to version or device to
// device, where the model format leaves the answer to ATen, found out by asking ATen once per device
// type (a probe, not a version table: builds differ). gbc's lowering follows it so that compiled
// kernels compute what eager computes on the same machine.
// Test: tests/aten/aten_ops_test.cpp (AtenSemantics).
#pragma once

#include <c10/core/Device.h>

#include <set>
#include <string>

#include "compiler/ir/op_id.h"

namespace gbc {

struct AtenSemantics {
  /// Binary ops (add, sub, mul, div, and the comparisons) for which ATen uses a Python number next
  /// to a float16/bfloat16 tensor as float32 (opmath), instead of rounding it to the tensor's dtype
  /// first. LibTorch 1.13's CPU kernels round it for every op; 2.x keeps it for mul and div
  /// (1.5 * 0.1 is 0.15002 in float16 there, 0.14990 in 1.13) and rounds it for add and sub.
  std::set<OpId> half_numbers_in_float32;
};

/// Probed on the first call for each device type (one-element ops there), then cached. A device
/// type this process cannot use gets the CPU's answer.
const AtenSemantics& aten_semantics(c10::Device device);

}  // namespace gbc
