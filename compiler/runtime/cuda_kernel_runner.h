// gbc's fused kernels on CUDA: the KernelRegionOptions (kernel_region.h) a region compiler passes
// for device cuda. Kernels are specialized to the call's layouts and compiled before their first
// launch (the interpreter cannot read device memory): each variant set becomes one NVRTC module
// (generate_cuda_source, then PTX for the device's compute capability by compile_cuda_ptx, cached
// on disk by content hash in --cache-dir's cuda/; the driver JIT-compiles the PTX at load), loaded
// with the driver API (CudaModule) on cuda:0's primary context, the one ATen uses. Launches use
// cuda_launch_shape with the device's multiprocessor count and go to the legacy default stream
// (stream 0): the stream ATen runs on unless a program changes its current stream, which gbcheck
// never does, so kernels are ordered with the ATen ops around them and write into ATen-allocated
// outputs without extra synchronization. (LibTorch's CPU build has no at::cuda headers, so ATen's
// current stream cannot be asked for.) A module that fails to compile or load is an FB001
// fallback with NVRTC's (or the driver's) first error line; the full log is on --log kernels.
// Tests: tests/codegen/cuda_corpus_test.cpp (compiles every corpus model's kernels, on the CPU),
// tests/backends/gbc_cuda_test.cpp (runs them, on a GPU).
#pragma once

#include <string>
#include <vector>

#include "compiler/cuda/cuda_api.h"
#include "compiler/kernel/kernel_ir.h"
#include "compiler/runtime/kernel_region.h"

namespace gbc {

/// Options for make_kernel_region on device cuda: NVRTC modules and launches on cuda:0; each
/// reduction variant holds one row class (refine_variant: cuda_refine_variant with cuda:0's
/// multiprocessors).
KernelRegionOptions cuda_kernel_region_options(const CompileContext& ctx);

/// Sets a reduction variant's row class (kir::Kernel::cuda_rows) to the call's, as cuda_row_class
/// tells it for a device of `multiprocessors` (KernelRegionOptions::refine_variant).
RefineVariant cuda_refine_variant(int multiprocessors);

/// Compiles kernels (specialized, uniquely named) into one module for cuda:0 and returns one launcher
/// per kernel; the launchers take GbcKernelArgs whose buffers hold device pointers. ok = false with
/// the first error line when NVRTC or the driver is missing, or compiling or loading fails.
/// cache_dir: the ModuleCache folder ("" = ModuleCache::default_dir()).
NativeModule compile_cuda_module(const std::vector<kir::Kernel>& kernels, const std::string& module, bool use_cache,
                                 const std::string& cache_dir = "");

/// While alive, gbc's CUDA kernels launched on this thread go to `stream` (one being captured into
/// a CUDA graph) instead of the legacy default stream, and every tensor they read or write is
/// appended to keep_alive: a captured graph replays on those addresses, so their memory must not
/// return to ATen's allocator. Not nestable.
class CudaLaunchCapture {
 public:
  CudaLaunchCapture(CUstream stream, std::vector<at::Tensor>* keep_alive);
  ~CudaLaunchCapture();
  CudaLaunchCapture(const CudaLaunchCapture&) = delete;
  CudaLaunchCapture& operator=(const CudaLaunchCapture&) = delete;

  /// The capture active on this thread, or nullptr.
  static CudaLaunchCapture* active();

  CUstream stream() const { return stream_; }
  void retain(const at::Tensor& tensor) { keep_alive_->push_back(tensor); }
  void count_launch() { ++launches_; }
  /// Kernel launches made while alive.
  int launches() const { return launches_; }

 private:
  CUstream stream_;
  std::vector<at::Tensor>* keep_alive_;
  int launches_ = 0;
};

}  // namespace gbc
