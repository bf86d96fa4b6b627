// The LibTorch device a backend's options name ("cpu" or "cuda", the first GPU): where the harness
// draws inputs and where eager runs. Test: tests/runtime/backends_test.cpp runs both devices' paths.
#pragma once

#include <c10/core/Device.h>

#include "compiler/runtime/backend_interface.h"

namespace gbc {

inline c10::Device backend_device(const BackendOptions& options) {
  return options.device == "cuda" ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
}

}  // namespace gbc
