// A CUDA event on cuda:0's primary context (the one ATen uses), for timing device work the way
// CUDA's own tools and PyTorch's benchmarks do: record before and after on the stream the work
// runs on, and read the time between them once the second has completed. Host clocks around a
// synchronized call also count the launch latency and the host's work; events count the device's.
// Test: tests/cuda/cuda_driver_test.cpp (skips without a GPU).
#pragma once

#include "compiler/cuda/cuda_api.h"

namespace gbc {

class CudaEvent {
 public:
  /// Throws CudaError when the driver is unusable.
  CudaEvent();
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  CudaEvent(CudaEvent&& other) noexcept;
  CudaEvent& operator=(CudaEvent&&) = delete;

  /// Records the event on `stream` (default: the legacy default stream, ATen's and gbc's).
  void record(CUstream stream = nullptr);
  /// Milliseconds between `start` and this event, both recorded; waits for this one to complete.
  float elapsed_since(const CudaEvent& start) const;

 private:
  CUevent event_ = nullptr;
};

}  // namespace gbc
