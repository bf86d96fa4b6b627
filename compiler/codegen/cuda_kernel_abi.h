/* The calling convention between gbc's runtime and a generated CUDA kernel. Plain C, included by
 * the host and embedded verbatim (after kernel_prelude.h and kernel_abi.h) in every NVRTC source.
 *
 * A kernel is `extern "C" __global__ void NAME(const __grid_constant__ GbcCudaKernelArgs a)`: one
 * parameter passed by value, which the kernel reads in place from the parameter bank
 * (__grid_constant__: no per-thread copy; sm_70+, CUDA 11.7+). Launch it with
 * cuLaunchKernel(..., kernel_params = {&args}, ...).
 *
 * Fields mean what they mean in GbcKernelArgs (kernel_abi.h), with two differences: `data` holds
 * device pointers, and the buffers and host scalars are stored inline, so that nothing but the
 * parameter itself has to reach the device. The struct stays under the 4 KiB parameter limit of
 * every CUDA version; kernels with more buffers or scalars than the arrays hold are not generated
 * (cuda_unsupported_reason() in cuda_codegen.h says why).
 *
 * Launch shape (cuda_launch_shape() in cuda_codegen.h picks one):
 * - Pointwise kernels: any 1-D grid and block; a grid-stride loop covers [0, numel).
 * - Reduction kernels: blockDim.x threads fold one row o, blockDim.y rows per block, any grid
 *   (a grid-stride loop over rows). blockDim.x is a power of two up to 32, or a multiple of 32 up
 *   to 1024 with blockDim.y == 1; blockDim.x * blockDim.y is a multiple of 32. With splits > 1
 *   (blockDim.y == 1), the grid walks (row, part) units instead, and workspace holds
 *   GBC_SPLIT_COUNTS_BYTES(outer) bytes of zeroed row counters, then outer * splits parts of 8
 *   bytes.
 * Tests: tests/codegen/cuda_codegen_test.cpp.
 */
#ifndef GBC_CUDA_KERNEL_ABI_H_
#define GBC_CUDA_KERNEL_ABI_H_

#if !defined(__CUDACC_RTC__)
#include "compiler/kernel/kernel_abi.h"
#endif

#define GBC_CUDA_MAX_BUFFERS 16
#define GBC_CUDA_MAX_SCALARS 8

/* Bytes of a split reduction's row counters at the start of the workspace (16-byte aligned). */
#define GBC_SPLIT_COUNTS_BYTES(outer) ((((outer) * 4) + 15) / 16 * 16)

typedef struct GbcCudaKernelArgs {
  int64_t numel;   /* pointwise */
  int64_t outer;   /* reduction */
  int64_t inner;   /* reduction */
  int64_t splits;  /* reduction: blocks per row; > 1 only for kernels that can split rows */
  void* workspace; /* reduction with splits > 1: counters, then parts (cuda_codegen.h) */
  GbcBufferArg buffers[GBC_CUDA_MAX_BUFFERS];
  double scalars[GBC_CUDA_MAX_SCALARS];
} GbcCudaKernelArgs;

#ifdef __cplusplus
static_assert(sizeof(GbcCudaKernelArgs) <= 4096, "kernel parameters are limited to 4 KiB");
#endif

#endif /* GBC_CUDA_KERNEL_ABI_H_ */
