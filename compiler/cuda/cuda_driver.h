// The CUDA driver API, loaded from libcuda.so.1 with dlopen on first use. On a machine without an
// NVIDIA driver everything still links and runs: available() is false and unavailable_reason()
// says why, so callers (and tests) can skip the GPU path with a clear message.
//
// The member function pointers are named after the API functions but bound to the symbols that
// cuda.h maps them to (cuMemAlloc -> cuMemAlloc_v2, ...): libcuda still exports the old
// unversioned ABIs under the plain names, and calling those through the new signatures is wrong.
#pragma once

#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/cuda/cuda_api.h"

namespace gbc {

/// A failed driver call; what() reads like "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
class CudaError : public std::runtime_error {
 public:
  CudaError(CUresult code, const std::string& message) : std::runtime_error(message), code_(code) {}
  CUresult code() const { return code_; }

 private:
  CUresult code_;
};

class CudaDriver {
 public:
  /// Loads and initialises the driver the first time; thread-safe.
  static CudaDriver& get();

  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  bool available() const { return reason_.empty(); }
  /// Empty when available, e.g. "libcuda.so.1 not found (no NVIDIA driver on this machine): ...".
  std::string unavailable_reason() const { return reason_; }

  /// Throws CudaError(what: NAME (description)) unless result is CUDA_SUCCESS.
  void check(CUresult result, const char* what) const;
  /// "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"; works for unknown codes too.
  std::string error_text(CUresult result) const;

  /// E.g. 13000 for a CUDA 13.0 driver. The driver must be available (else CudaError).
  int driver_version() const;
  int device_count() const;
  /// major * 10 + minor, e.g. 90 for an H100.
  int compute_capability(int device) const;
  std::string device_name(int device) const;
  /// Returns the context current on this thread; when there is none, retains the device's primary
  /// context and makes it current. The primary context is the one LibTorch uses, so tensors it
  /// allocates and kernels we launch share one address space. Retained for the process lifetime.
  CUcontext ensure_context(int device = 0);
  /// Waits for all work of `device`'s primary context; "" when it completed, else the error the
  /// device reported ("CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)").
  /// A kernel's fault is reported at the next synchronization, and sticks to the context: every
  /// later call fails too.
  std::string synchronize_status(int device = 0);

  // Driver entry points; null when !available().
  CUresult (*cuInit)(unsigned int flags) = nullptr;
  CUresult (*cuDriverGetVersion)(int* version) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetCount)(int* count) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int* value, CUdevice_attribute attribute, CUdevice device) = nullptr;
  CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device) = nullptr;
  CUresult (*cuCtxGetCurrent)(CUcontext* context) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext context) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuModuleLoadDataEx)(CUmodule* module, const void* image, unsigned int num_options,
                                 CUjit_option* options, void** option_values) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule module) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction function, CUfunction_attribute attribute, int value) = nullptr;
  CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int* blocks, CUfunction function, int block_size,
                                                          size_t dynamic_shared_bytes) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned int grid_x, unsigned int grid_y,
                             unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                             unsigned int block_z, unsigned int shared_mem_bytes, CUstream stream,
                             void** kernel_params, void** extra) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr* pointer, size_t bytes) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr pointer) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr dst, const void* src, size_t bytes) = nullptr;
  CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, size_t bytes) = nullptr;
  CUresult (*cuMemsetD8)(CUdeviceptr dst, unsigned char value, size_t count) = nullptr;
  CUresult (*cuStreamCreate)(CUstream* stream, unsigned int flags) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream stream) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream stream) = nullptr;
  CUresult (*cuStreamBeginCapture)(CUstream stream, CUstreamCaptureMode mode) = nullptr;
  CUresult (*cuStreamEndCapture)(CUstream stream, CUgraph* graph) = nullptr;
  CUresult (*cuGraphInstantiate)(CUgraphExec* exec, CUgraph graph, unsigned long long flags) = nullptr;
  CUresult (*cuGraphLaunch)(CUgraphExec exec, CUstream stream) = nullptr;
  CUresult (*cuGraphExecDestroy)(CUgraphExec exec) = nullptr;
  CUresult (*cuGraphDestroy)(CUgraph graph) = nullptr;
  CUresult (*cuEventCreate)(CUevent* event, unsigned int flags) = nullptr;
  CUresult (*cuEventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent event) = nullptr;
  CUresult (*cuEventElapsedTime)(float* ms, CUevent start, CUevent end) = nullptr;
  CUresult (*cuEventDestroy)(CUevent event) = nullptr;
  CUresult (*cuGetErrorName)(CUresult result, const char** name) = nullptr;
  CUresult (*cuGetErrorString)(CUresult result, const char** description) = nullptr;

 private:
  CudaDriver();
  std::string load();
  void require() const;

  std::string reason_;
  std::mutex mutex_;                        // guards primary_contexts_
  std::vector<CUcontext> primary_contexts_;  // by ordinal; null until retained
};

}  // namespace gbc
