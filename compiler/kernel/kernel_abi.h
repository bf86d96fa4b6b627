/* The calling convention between gbc's runtime and a compiled CPU kernel. Plain C, embedded
 * verbatim at the top of every generated translation unit, so the runtime and the shared object
 * agree by construction. A kernel is `extern "C" void NAME(const GbcKernelArgs* args)`.
 *
 * Pointwise kernels run i in [0, numel); reduction kernels run o in [0, outer), r in [0, inner).
 * Buffers follow Kernel::buffers (inputs, then outputs); each carries the strides its IndexKind
 * needs: s0/s1 for Affine, sizes/strides for Strided (in iteration order, reduced dims last).
 */
#ifndef GBC_KERNEL_ABI_H_
#define GBC_KERNEL_ABI_H_

/* NVRTC has no system headers; there the prelude, placed first, defines the fixed-width types. */
#if !defined(__CUDACC_RTC__)
#include <stdint.h>
#endif

#define GBC_MAX_RANK 8

typedef struct GbcBufferArg {
  void* data;
  int64_t s0; /* Affine: stride of i (pointwise) or o (reduction) */
  int64_t s1; /* Affine: stride of r (reduction) */
  int32_t rank;
  int64_t sizes[GBC_MAX_RANK];
  int64_t strides[GBC_MAX_RANK];
  int64_t sq; /* CPU column schedule: stride of q (kir::Buffer::col_step 2) */
} GbcBufferArg;

typedef struct GbcKernelArgs {
  int64_t numel; /* pointwise */
  int64_t outer; /* reduction */
  int64_t inner; /* reduction */
  const GbcBufferArg* buffers;
  const double* scalars;  /* host scalars, as double (ints and bools are exact up to 2^53) */
  int32_t num_threads;    /* the runtime's budget; kernels may use fewer */
  int64_t cols;           /* CPU column schedule: o (or i) = p * cols + q (specialize.h) */
  int32_t stream_stores;  /* CPU: write contiguous outputs past the caches (kernel_support.h) */
} GbcKernelArgs;

typedef void (*GbcKernelFn)(const GbcKernelArgs*);

#endif /* GBC_KERNEL_ABI_H_ */
