// A loaded CUDA module (PTX or CUBIN from NvrtcCompiler) and kernel launches from it. RAII: the
// module is unloaded when the object dies. Loading and launching make the device's primary
// context current on the calling thread when no context is (see CudaDriver::ensure_context).
// One object is not thread-safe (function() fills a cache); share modules behind a lock.
#pragma once

#include <string>
#include <unordered_map>

#include "compiler/cuda/cuda_api.h"

namespace gbc {

struct Dim3 {
  unsigned int x = 1;
  unsigned int y = 1;
  unsigned int z = 1;
};

class CudaModule {
 public:
  /// image: PTX text or CUBIN bytes. Throws CudaError (with the JIT log for bad PTX) on failure,
  /// or when the driver is unavailable.
  explicit CudaModule(const std::string& image, int device = 0);
  ~CudaModule();
  CudaModule(CudaModule&& other) noexcept;
  CudaModule& operator=(CudaModule&& other) noexcept;
  CudaModule(const CudaModule&) = delete;
  CudaModule& operator=(const CudaModule&) = delete;

  CUmodule handle() const { return module_; }
  int device() const { return device_; }
  /// The kernel's entry point; declare kernels extern "C" so name is not mangled. Cached.
  CUfunction function(const std::string& name);
  /// args: one pointer per kernel parameter, pointing at the argument's value. Asynchronous on
  /// stream (null: the legacy default stream); errors of the kernel itself surface at the next
  /// synchronizing call. Shared memory above 48 KiB is opted into automatically.
  void launch(CUfunction function, Dim3 grid, Dim3 block, unsigned int shared_mem_bytes, CUstream stream,
              void** args);

 private:
  void unload() noexcept;

  CUmodule module_ = nullptr;
  CUcontext context_ = nullptr;
  int device_ = 0;
  std::unordered_map<std::string, CUfunction> functions_;
};

}  // namespace gbc
