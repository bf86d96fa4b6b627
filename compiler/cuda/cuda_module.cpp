#include "compiler/cuda/cuda_module.h"

#include <cstdint>
#include <utility>

#include "compiler/cuda/cuda_driver.h"

namespace gbc {
namespace {

// Kernels get this much dynamic shared memory without opting in (CUDA's default carve-out).
constexpr unsigned int kDefaultSharedMemLimit = 48 * 1024;

}  // namespace

CudaModule::CudaModule(const std::string& image, int device) : device_(device) {
  CudaDriver& driver = CudaDriver::get();
  context_ = driver.ensure_context(device);
  // The PTX JIT explains a rejected image only through its error log buffer.
  char error_log[8192] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error_log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof error_log))};
  // image.c_str(): PTX must be NUL-terminated, and std::string always is.
  const CUresult result = driver.cuModuleLoadDataEx(&module_, image.c_str(), 2, options, values);
  if (result != CUDA_SUCCESS) {
    module_ = nullptr;
    std::string message = "cuModuleLoadDataEx: " + driver.error_text(result);
    if (error_log[0]) message += "\n" + std::string(error_log);
    throw CudaError(result, message);
  }
}

CudaModule::~CudaModule() { unload(); }

CudaModule::CudaModule(CudaModule&& other) noexcept
    : module_(std::exchange(other.module_, nullptr)),
      context_(other.context_),
      device_(other.device_),
      functions_(std::move(other.functions_)) {}

CudaModule& CudaModule::operator=(CudaModule&& other) noexcept {
  if (this != &other) {
    unload();
    module_ = std::exchange(other.module_, nullptr);
    context_ = other.context_;
    device_ = other.device_;
    functions_ = std::move(other.functions_);
  }
  return *this;
}

void CudaModule::unload() noexcept {
  if (!module_) return;
  CudaDriver& driver = CudaDriver::get();
  // A module belongs to the context it was loaded in; a thread that never touched CUDA has none
  // current. Errors are ignored: at process exit the driver may already be torn down.
  CUcontext current = nullptr;
  if (driver.cuCtxGetCurrent(&current) == CUDA_SUCCESS && !current) driver.cuCtxSetCurrent(context_);
  driver.cuModuleUnload(module_);
  module_ = nullptr;
  functions_.clear();
}

CUfunction CudaModule::function(const std::string& name) {
  if (auto it = functions_.find(name); it != functions_.end()) return it->second;
  CudaDriver& driver = CudaDriver::get();
  CUfunction function = nullptr;
  driver.check(driver.cuModuleGetFunction(&function, module_, name.c_str()),
               ("cuModuleGetFunction(" + name + ")").c_str());
  functions_.emplace(name, function);
  return function;
}

void CudaModule::launch(CUfunction function, Dim3 grid, Dim3 block, unsigned int shared_mem_bytes,
                        CUstream stream, void** args) {
  CudaDriver& driver = CudaDriver::get();
  driver.ensure_context(device_);
  if (shared_mem_bytes > kDefaultSharedMemLimit) {
    driver.check(driver.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                           static_cast<int>(shared_mem_bytes)),
                 "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  }
  driver.check(driver.cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                     shared_mem_bytes, stream, args, nullptr),
               "cuLaunchKernel");
}

}  // namespace gbc
