/* What generated kernels call beyond the scalar ops of kernel_prelude.h: strided indexing, the
 * argmax fold rule, and per target the pieces of a loop schedule — work splitting and strided
 * offset blocks for OpenMP on the CPU, vector accesses and warp/block folds for CUDA. Embedded
 * verbatim after the prelude (and the ABI headers) in every generated source, so a compiled graph
 * needs nothing from the source tree; host tests include it directly.
 * Tests: tests/codegen/cpu_codegen_test.cpp, tests/codegen/cuda_codegen_test.cpp.
 */
#ifndef GBC_KERNEL_SUPPORT_H_
#define GBC_KERNEL_SUPPORT_H_

/* Offset of element `linear` of a Strided buffer: linear unflattened over sizes (row-major),
 * dotted with strides. rank is a constant in generated code, so the loop unrolls. */
GBC_FN int64_t gbc_strided_offset(const GbcBufferArg* b, int rank, int64_t linear) {
  int64_t off = 0;
  for (int d = rank - 1; d > 0; --d) {
    const int64_t q = linear / b->sizes[d];
    off += (linear - q * b->sizes[d]) * b->strides[d];
    linear = q;
  }
  return rank > 0 ? off + linear * b->strides[0] : 0;
}

GBC_FN int64_t gbc_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ArgMax folds (value, index) pairs. Within one sequence, `x` at a later index replaces `best`
 * when larger, or when it is the first NaN (NaN is the maximum, as in ATen). Merging partial
 * results of disjoint parts: the larger value wins, then NaN over numbers, then the smaller index
 * on ties, which is the first maximum of the whole sequence. */
template <typename T> GBC_FN bool gbc_argmax_better(T x, T best) { return x > best || (x != x && !(best != best)); }
template <typename T> GBC_FN void gbc_argmax_merge(T& v, int64_t& i, T v2, int64_t i2) {
  const bool nan1 = v != v, nan2 = v2 != v2;
  const bool take = nan2 ? (!nan1 || i2 < i) : (!nan1 && (v2 > v || (v2 == v && i2 < i)));
  if (take) {
    v = v2;
    i = i2;
  }
}

/* GBC_CUDA_EMULATION: the CUDA branch compiled for the host, by tests (tests/codegen/cuda_emulation.h). */
#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__) && !defined(GBC_CUDA_EMULATION)
/* ---- CPU: OpenMP work split, row caches, huge pages and strided offset blocks ---- */
#if !defined(GBC_KERNEL_STD)
#include <cstdlib>
#include <cstring>
#endif
#if defined(__linux__)
#include <sys/mman.h>
#endif

/* Reductions fold each row into GBC_LANES accumulators (element r into lane r % GBC_LANES) that
 * vectorize, then fold the lanes in order: a fixed order, so results do not depend on the
 * compiler or the vector width. */
#define GBC_LANES 16
/* Reductions that load 1-byte elements per element (bool masks) use twice the lanes: GCC sizes a
 * loop's vectors by its narrowest type, and 16 lanes of bytes made 16-byte vectors, 4 floats each
 * (cpu_codegen.cpp). */
#define GBC_LANES_WIDE 32
/* Loops over Strided buffers compute their offsets for GBC_BLOCK elements at a time (a multiple
 * of GBC_LANES_WIDE), then run the vectorized body over the block. */
#define GBC_BLOCK 256
/* Kernels run on the calling thread below this many elements; above, each thread gets at least
 * GBC_WORK_PER_THREAD (a parallel region costs a few microseconds). */
#define GBC_PARALLEL_MIN_WORK 32768
#define GBC_WORK_PER_THREAD 16384
/* Reductions keep a costly value one pass computes and a later pass reads (softmax's
 * exp(x - max)) in a per-thread row of scratch memory when rows take at most this many bytes of
 * it (they stay in L2); longer rows compute the value again. */
#define GBC_ROW_CACHE_BYTES (1 << 20)
/* Reduction inputs read across rows (an affine buffer whose r stride is not 1: a transposed view)
 * are copied GBC_TILE_ROWS rows at a time into a per-thread tile, walking r outside the rows so
 * the reads of a transposed view are contiguous runs; the passes then read the tile's rows as
 * vectors, from L2 (cpu_codegen.cpp). */
#define GBC_TILE_ROWS 16

/* The column schedule (cpu_codegen.cpp) keeps one accumulator per column of a block and stage, at
 * most GBC_COLUMN_BLOCK of them (on the stack). A kernel that passes over a block more than once
 * takes fewer columns, so that what a pass reads (inner elements of each column) stays in L2 for
 * the next pass. */
#define GBC_COLUMN_BLOCK 1024
#define GBC_COLUMN_CACHE_BYTES (256 << 10)
GBC_FN int64_t gbc_column_block(int64_t inner, int64_t bytes_per_element, int passes) {
  if (passes <= 1 || inner * bytes_per_element <= 0) return GBC_COLUMN_BLOCK;
  const int64_t qb = GBC_COLUMN_CACHE_BYTES / (inner * bytes_per_element) / 64 * 64;
  return qb < 64 ? 64 : qb > GBC_COLUMN_BLOCK ? GBC_COLUMN_BLOCK : qb;
}

/* Outputs of at least this many bytes are backed by transparent huge pages where the system
 * leaves them to madvise (the default): a fresh output is typically a new mapping, and first
 * touching it page by page costs more than the kernel's arithmetic (16384 faults for 64 MiB, each
 * a few microseconds; one per 2 MiB instead). */
#define GBC_HUGE_PAGE_BYTES (2 << 20)
#define GBC_HUGE_PAGE_MIN_BYTES (4 << 20)

/* Asks for huge pages on the whole 2 MiB blocks inside [p, p + bytes) (advice only: memory that
 * is already touched or a kernel that refuses keep their pages, and results are the same). */
GBC_FN void gbc_advise_huge_pages(void* p, int64_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < GBC_HUGE_PAGE_MIN_BYTES) return;
  const uintptr_t mask = (uintptr_t)GBC_HUGE_PAGE_BYTES - 1;
  const uintptr_t begin = ((uintptr_t)p + mask) & ~mask, end = ((uintptr_t)p + (uintptr_t)bytes) & ~mask;
  if (end > begin) madvise((void*)begin, end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

/* Streaming stores: a kernel whose buffers together exceed the last-level cache (the runtime sets
 * GbcKernelArgs::stream_stores, compiler/runtime/kernel_call.cpp) writes its contiguous outputs
 * with non-temporal stores, which skip reading each output line into the cache before writing it
 * and do not evict the inputs: a third less memory traffic for a kernel reading two tensors and
 * writing one. The kernel fills a block of values in L1 and hands it to gbc_stream_store; the
 * stores are weakly ordered, so each thread fences after its last one (gbc_stream_fence). */
GBC_FN void gbc_stream_store(void* dst, const void* src, int64_t bytes) {
  char* d = (char*)dst;
  const char* s = (const char*)src;
#if defined(__x86_64__) && defined(__SSE2__)
#if defined(__AVX__)
  typedef long long gbc_stream_vec __attribute__((vector_size(32)));
#else
  typedef long long gbc_stream_vec __attribute__((vector_size(16)));
#endif
  const int64_t width = (int64_t)sizeof(gbc_stream_vec);
  const int64_t head = gbc_min_i64(bytes, (int64_t)((width - (uintptr_t)d % width) % width));
  if (head > 0) std::memcpy(d, s, (size_t)head); /* a library call unless skipped: blocks are aligned */
  int64_t k = head;
  for (; k + width <= bytes; k += width) {
    gbc_stream_vec v;
    std::memcpy(&v, s + k, sizeof v);
#if defined(__AVX__)
    __builtin_ia32_movntdq256((gbc_stream_vec*)(d + k), v);
#else
    __builtin_ia32_movntdq((gbc_stream_vec*)(d + k), v);
#endif
  }
  if (k < bytes) std::memcpy(d + k, s + k, (size_t)(bytes - k));
#else
  std::memcpy(d, s, (size_t)bytes);
#endif
}
GBC_FN void gbc_stream_fence() {
#if defined(__x86_64__) && defined(__SSE2__)
  __builtin_ia32_sfence();
#endif
}

/* Threads for `work` elements made of `units` independent parts (elements, rows), at most `budget`. */
GBC_FN int gbc_cpu_threads(int64_t work, int64_t units, int32_t budget) {
  if (budget <= 1 || work < GBC_PARALLEL_MIN_WORK) return 1;
  int64_t threads = work / GBC_WORK_PER_THREAD;
  if (threads > units) threads = units;
  if (threads > budget) threads = budget;
  return threads < 1 ? 1 : (int)threads;
}

/* Each of `parts` threads takes this many of `count` units (the last may take fewer), rounded up
 * to 64 so that threads do not share cache lines of the outputs. */
GBC_FN int64_t gbc_cpu_chunk(int64_t count, int parts) {
  const int64_t chunk = (count + parts - 1) / parts;
  return (chunk + 63) / 64 * 64;
}

/* out[k] = offset of element first + k of a Strided buffer, for k < count (first + count is at
 * most the buffer's element count): one unflatten, then runs along the innermost dim (a fill that
 * vectorizes: broadcast channels of a [N, C, H, W] batch norm are runs of H * W equal offsets),
 * with carries into the outer dims between runs (no divisions). */
GBC_FN void gbc_strided_offsets(const GbcBufferArg* b, int rank, int64_t first, int64_t count, int64_t* out) {
  if (rank == 0) {
    for (int64_t k = 0; k < count; ++k) out[k] = 0;
    return;
  }
  int64_t idx[GBC_MAX_RANK];
  int64_t off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    idx[d] = first % b->sizes[d];
    first /= b->sizes[d];
    off += idx[d] * b->strides[d];
  }
  const int last = rank - 1;
  const int64_t stride = b->strides[last];
  for (int64_t k = 0; k < count;) {
    const int64_t run = gbc_min_i64(count - k, b->sizes[last] - idx[last]);
    for (int64_t j = 0; j < run; ++j) out[k + j] = off + j * stride;
    k += run;
    off += run * stride;
    idx[last] += run;
    int d = last;
    while (idx[d] == b->sizes[d] && d > 0) {
      off -= b->strides[d] * b->sizes[d];
      idx[d] = 0;
      --d;
      ++idx[d];
      off += b->strides[d];
    }
  }
}

#else
/* ---- CUDA: vector accesses, warp and block folds ---- */

/* N consecutive elements of a contiguous buffer, moved as one access of up to 16 bytes (wider
 * ones split into 16-byte pieces), so the alignment asked of the pointer is at most 16. */
template <typename T, int N>
struct alignas(sizeof(T) * N < 16 ? sizeof(T) * N : 16) GbcVec {
  T v[N];
};
GBC_FN bool gbc_aligned(const void* p, unsigned long long bytes) {
  return ((unsigned long long)p & (bytes - 1)) == 0;
}

/* Asks L2 for the 128-byte line at p ahead of its loads (a block's next row); results never
 * depend on it. */
GBC_FN void gbc_prefetch_l2(const void* p) {
#if defined(GBC_CUDA_EMULATION)
  (void)p;
#else
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#endif
}

/* Shuffles for every accumulator type: narrow integers and bool travel as int. */
GBC_FN float gbc_shfl_xor(float v, int mask, int width) { return __shfl_xor_sync(0xffffffffu, v, mask, width); }
GBC_FN double gbc_shfl_xor(double v, int mask, int width) { return __shfl_xor_sync(0xffffffffu, v, mask, width); }
GBC_FN int32_t gbc_shfl_xor(int32_t v, int mask, int width) { return __shfl_xor_sync(0xffffffffu, v, mask, width); }
GBC_FN int64_t gbc_shfl_xor(int64_t v, int mask, int width) { return __shfl_xor_sync(0xffffffffu, v, mask, width); }
template <typename T> GBC_FN T gbc_shfl_xor(T v, int mask, int width) {
  return (T)__shfl_xor_sync(0xffffffffu, (int)v, mask, width);
}
GBC_FN float gbc_shfl(float v, int lane, int width) { return __shfl_sync(0xffffffffu, v, lane, width); }
GBC_FN double gbc_shfl(double v, int lane, int width) { return __shfl_sync(0xffffffffu, v, lane, width); }
GBC_FN int32_t gbc_shfl(int32_t v, int lane, int width) { return __shfl_sync(0xffffffffu, v, lane, width); }
GBC_FN int64_t gbc_shfl(int64_t v, int lane, int width) { return __shfl_sync(0xffffffffu, v, lane, width); }
template <typename T> GBC_FN T gbc_shfl(T v, int lane, int width) {
  return (T)__shfl_sync(0xffffffffu, (int)v, lane, width);
}

/* The combine functions of kir::Combine, as function objects for the block folds. */
struct GbcFoldSum {
  template <typename T> __device__ T operator()(T a, T b) const { return gbc_add(a, b); }
};
struct GbcFoldProd {
  template <typename T> __device__ T operator()(T a, T b) const { return gbc_mul(a, b); }
};
struct GbcFoldMax {
  template <typename T> __device__ T operator()(T a, T b) const { return gbc_maximum(a, b); }
};
struct GbcFoldMin {
  template <typename T> __device__ T operator()(T a, T b) const { return gbc_minimum(a, b); }
};

/* Folds the per-thread values of one row (the blockDim.x threads with this threadIdx.y) and
 * returns the result to every one of them: a butterfly over the row's lanes in each warp, lane 0's
 * value broadcast (gbc_maximum is not commutative on signed zeros, so lanes could otherwise
 * differ), then, for rows of several warps, the warps' results folded in order through `scratch`
 * (64 words of shared memory). Must be reached by every thread of the block. */
template <typename T, typename Op>
GBC_FN T gbc_block_fold(T v, Op op, long long* scratch) {
  const int width = blockDim.x < 32u ? (int)blockDim.x : 32;
  for (int m = width / 2; m > 0; m /= 2) v = op(v, gbc_shfl_xor(v, m, width));
  v = gbc_shfl(v, 0, width);
  if (blockDim.x <= 32u) return v;
  T* partial = (T*)scratch;
  __syncthreads(); /* readers of the previous fold are done with scratch */
  if ((threadIdx.x & 31u) == 0) partial[threadIdx.x >> 5] = v;
  __syncthreads();
  T r = partial[0];
  for (unsigned w = 1; w < (blockDim.x >> 5); ++w) r = op(r, partial[w]);
  return r;
}

/* gbc_block_fold for ArgMax's (value, index) pairs. */
template <typename T>
GBC_FN void gbc_block_argmax(T& v, int64_t& i, long long* scratch) {
  const int width = blockDim.x < 32u ? (int)blockDim.x : 32;
  for (int m = width / 2; m > 0; m /= 2) {
    const T v2 = gbc_shfl_xor(v, m, width);
    const int64_t i2 = gbc_shfl_xor(i, m, width);
    gbc_argmax_merge(v, i, v2, i2);
  }
  v = gbc_shfl(v, 0, width);
  i = gbc_shfl(i, 0, width);
  if (blockDim.x <= 32u) return;
  T* values = (T*)scratch;
  int64_t* indices = (int64_t*)(scratch + 32);
  __syncthreads();
  if ((threadIdx.x & 31u) == 0) {
    values[threadIdx.x >> 5] = v;
    indices[threadIdx.x >> 5] = i;
  }
  __syncthreads();
  v = values[0];
  i = indices[0];
  for (unsigned w = 1; w < (blockDim.x >> 5); ++w) gbc_argmax_merge(v, i, values[w], indices[w]);
}
#endif

#endif /* GBC_KERNEL_SUPPORT_H_ */
