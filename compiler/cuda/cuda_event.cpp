#include "compiler/cuda/cuda_event.h"

#include <utility>

#include "compiler/cuda/cuda_driver.h"

namespace gbc {

CudaEvent::CudaEvent() {
  CudaDriver& driver = CudaDriver::get();
  driver.ensure_context(0);
  driver.check(driver.cuEventCreate(&event_, CU_EVENT_DEFAULT), "cuEventCreate");
}

CudaEvent::~CudaEvent() {
  // Errors are ignored: at process exit the driver may already be torn down.
  if (event_) CudaDriver::get().cuEventDestroy(event_);
}

CudaEvent::CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

void CudaEvent::record(CUstream stream) {
  CudaDriver& driver = CudaDriver::get();
  driver.check(driver.cuEventRecord(event_, stream), "cuEventRecord");
}

float CudaEvent::elapsed_since(const CudaEvent& start) const {
  CudaDriver& driver = CudaDriver::get();
  driver.check(driver.cuEventSynchronize(event_), "cuEventSynchronize");
  float ms = 0.0f;
  driver.check(driver.cuEventElapsedTime(&ms, start.event_, event_), "cuEventElapsedTime");
  return ms;
}

}  // namespace gbc
