#include "compiler/cuda/cuda_driver.h"

#include <dlfcn.h>

#include "compiler/cuda/bind_symbol.h"
#include "compiler/support/log.h"

namespace gbc {

CudaDriver& CudaDriver::get() {
  static CudaDriver driver;
  return driver;
}

CudaDriver::CudaDriver() {
  reason_ = load();
  if (available()) {
    GBC_LOG(debug) << "cuda: driver " << driver_version() << ", " << device_count() << " device(s)";
  } else {
    GBC_LOG(debug) << "cuda: driver unavailable: " << reason_;
  }
}

// Returns the reason the driver cannot be used, empty on success. The library is never dlclose'd:
// static destructors elsewhere (LibTorch's included) may still call into it at exit.
std::string CudaDriver::load() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char* error = dlerror();
    return std::string("libcuda.so.1 not found (no NVIDIA driver on this machine): ") +
           (error ? error : "dlopen failed");
  }
  // Symbol names follow the #defines at the top of CUDA 13's cuda.h (legacy default stream, i.e.
  // no _ptsz/_ptds variants). cuGraphInstantiate maps to cuGraphInstantiateWithFlags there.
  const bool ok = bind_symbol(library, cuInit, "cuInit") &&
                  bind_symbol(library, cuDriverGetVersion, "cuDriverGetVersion") &&
                  bind_symbol(library, cuDeviceGet, "cuDeviceGet") &&
                  bind_symbol(library, cuDeviceGetCount, "cuDeviceGetCount") &&
                  bind_symbol(library, cuDeviceGetAttribute, "cuDeviceGetAttribute") &&
                  bind_symbol(library, cuDeviceGetName, "cuDeviceGetName") &&
                  bind_symbol(library, cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") &&
                  bind_symbol(library, cuCtxGetCurrent, "cuCtxGetCurrent") &&
                  bind_symbol(library, cuCtxSetCurrent, "cuCtxSetCurrent") &&
                  bind_symbol(library, cuCtxSynchronize, "cuCtxSynchronize") &&
                  bind_symbol(library, cuModuleLoadDataEx, "cuModuleLoadDataEx") &&
                  bind_symbol(library, cuModuleUnload, "cuModuleUnload") &&
                  bind_symbol(library, cuModuleGetFunction, "cuModuleGetFunction") &&
                  bind_symbol(library, cuFuncSetAttribute, "cuFuncSetAttribute") &&
                  bind_symbol(library, cuOccupancyMaxActiveBlocksPerMultiprocessor, "cuOccupancyMaxActiveBlocksPerMultiprocessor") &&
                  bind_symbol(library, cuLaunchKernel, "cuLaunchKernel") &&
                  bind_symbol(library, cuMemAlloc, "cuMemAlloc_v2") &&
                  bind_symbol(library, cuMemFree, "cuMemFree_v2") &&
                  bind_symbol(library, cuMemcpyHtoD, "cuMemcpyHtoD_v2") &&
                  bind_symbol(library, cuMemcpyDtoH, "cuMemcpyDtoH_v2") &&
                  bind_symbol(library, cuMemsetD8, "cuMemsetD8_v2") &&
                  bind_symbol(library, cuStreamCreate, "cuStreamCreate") &&
                  bind_symbol(library, cuStreamDestroy, "cuStreamDestroy_v2") &&
                  bind_symbol(library, cuStreamSynchronize, "cuStreamSynchronize") &&
                  bind_symbol(library, cuStreamBeginCapture, "cuStreamBeginCapture_v2") &&
                  bind_symbol(library, cuStreamEndCapture, "cuStreamEndCapture") &&
                  bind_symbol(library, cuGraphInstantiate, "cuGraphInstantiateWithFlags") &&
                  bind_symbol(library, cuGraphLaunch, "cuGraphLaunch") &&
                  bind_symbol(library, cuGraphExecDestroy, "cuGraphExecDestroy") &&
                  bind_symbol(library, cuGraphDestroy, "cuGraphDestroy") &&
                  bind_symbol(library, cuEventCreate, "cuEventCreate") &&
                  bind_symbol(library, cuEventRecord, "cuEventRecord") &&
                  bind_symbol(library, cuEventSynchronize, "cuEventSynchronize") &&
                  // CUDA 13 maps cuEventElapsedTime to _v2 (12.8+); older drivers have the plain one.
                  (bind_symbol(library, cuEventElapsedTime, "cuEventElapsedTime_v2") ||
                   bind_symbol(library, cuEventElapsedTime, "cuEventElapsedTime")) &&
                  bind_symbol(library, cuEventDestroy, "cuEventDestroy_v2") &&
                  bind_symbol(library, cuGetErrorName, "cuGetErrorName") &&
                  bind_symbol(library, cuGetErrorString, "cuGetErrorString");
  if (!ok) {
    const char* error = dlerror();
    return std::string("libcuda.so.1 is too old (needs a CUDA 12+ driver): ") +
           (error ? error : "missing symbol");
  }
  if (CUresult result = cuInit(0); result != CUDA_SUCCESS) {
    return "cuInit failed: " + error_text(result);
  }
  int count = 0;
  if (CUresult result = cuDeviceGetCount(&count); result != CUDA_SUCCESS) {
    return "cuDeviceGetCount failed: " + error_text(result);
  }
  if (count == 0) return "no CUDA devices visible (check CUDA_VISIBLE_DEVICES)";
  primary_contexts_.assign(count, nullptr);
  return "";
}

std::string CudaDriver::error_text(CUresult result) const {
  const char* name = nullptr;
  const char* description = nullptr;
  if (cuGetErrorName) cuGetErrorName(result, &name);
  if (cuGetErrorString) cuGetErrorString(result, &description);
  std::string text = name ? name : "CUDA error " + std::to_string(static_cast<int>(result));
  if (description) text += std::string(" (") + description + ")";
  return text;
}

void CudaDriver::check(CUresult result, const char* what) const {
  if (result != CUDA_SUCCESS) throw CudaError(result, std::string(what) + ": " + error_text(result));
}

void CudaDriver::require() const {
  if (!available()) throw CudaError(CUDA_ERROR_NOT_INITIALIZED, "CUDA driver unavailable: " + reason_);
}

int CudaDriver::driver_version() const {
  require();
  int version = 0;
  check(cuDriverGetVersion(&version), "cuDriverGetVersion");
  return version;
}

int CudaDriver::device_count() const {
  require();
  return static_cast<int>(primary_contexts_.size());
}

int CudaDriver::compute_capability(int device) const {
  require();
  CUdevice handle = 0;
  check(cuDeviceGet(&handle, device), "cuDeviceGet");
  int major = 0;
  int minor = 0;
  check(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, handle),
        "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
  check(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, handle),
        "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
  return major * 10 + minor;
}

std::string CudaDriver::device_name(int device) const {
  require();
  CUdevice handle = 0;
  check(cuDeviceGet(&handle, device), "cuDeviceGet");
  char name[256] = {};
  check(cuDeviceGetName(name, sizeof name, handle), "cuDeviceGetName");
  return name;
}

CUcontext CudaDriver::ensure_context(int device) {
  require();
  CUcontext current = nullptr;
  check(cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current) return current;
  if (device < 0 || device >= device_count()) {
    throw CudaError(CUDA_ERROR_INVALID_DEVICE, "CUDA device " + std::to_string(device) + " does not exist");
  }
  CUcontext context = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!primary_contexts_[device]) {
      CUdevice handle = 0;
      check(cuDeviceGet(&handle, device), "cuDeviceGet");
      check(cuDevicePrimaryCtxRetain(&primary_contexts_[device], handle), "cuDevicePrimaryCtxRetain");
    }
    context = primary_contexts_[device];
  }
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  return context;
}

std::string CudaDriver::synchronize_status(int device) {
  ensure_context(device);
  const CUresult result = cuCtxSynchronize();
  return result == CUDA_SUCCESS ? "" : error_text(result);
}

}  // namespace gbc
