/* Just enough of CUDA's execution model, in host C++, to run gbc's generated CUDA kernels on the
 * CPU in tests (tests/codegen/cuda_emulation_test.cpp): the source that NVRTC would compile is
 * compiled by the host compiler after this header, with GBC_CUDA_EMULATION defined so that
 * kernel_support.h takes its CUDA branch while the prelude keeps its host math.
 *
 * A launch runs the grid's blocks one after another; each block's threads are real threads that
 * meet at __syncthreads. __shared__ variables are function statics, which is right because blocks
 * never overlap. Warp shuffles exchange values through the block: every thread of the block must
 * reach them in the same order, which holds for gbc's folds (every thread calls them). Atomics and
 * fences map to std::atomic. What this cannot show: timing, memory coalescing, register limits,
 * and races that only a GPU's scheduling exposes; the GPU run covers those (ci/gpu_checks.sh). */
#ifndef GBC_CUDA_EMULATION_H_
#define GBC_CUDA_EMULATION_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#define GBC_CUDA_EMULATION 1
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __grid_constant__
#define __shared__ static

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
static thread_local dim3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;

/* A reusable barrier for the block's threads. */
class GbcEmuBarrier {
 public:
  explicit GbcEmuBarrier(unsigned n) : n_(n) {}
  void wait() {
    std::unique_lock<std::mutex> lock(m_);
    const unsigned gen = generation_;
    if (++arrived_ == n_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return gen != generation_; });
    }
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  unsigned n_, arrived_ = 0, generation_ = 0;
};
static GbcEmuBarrier* gbc_emu_barrier = nullptr;
static std::vector<uint64_t> gbc_emu_slots; /* one per thread of the block, for shuffles */

static inline void __syncthreads() { gbc_emu_barrier->wait(); }
static inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
static inline unsigned atomicAdd(unsigned* p, unsigned v) {
  return reinterpret_cast<std::atomic<unsigned>*>(p)->fetch_add(v);
}
static inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}
static inline double __longlong_as_double(long long i) {
  double d;
  std::memcpy(&d, &i, 8);
  return d;
}

static inline unsigned gbc_emu_thread() { return threadIdx.y * blockDim.x + threadIdx.x; }

/* Every thread publishes v, then reads the slot of `source(lane)` in its own warp. */
template <typename T, typename Source>
static T gbc_emu_exchange(T v, Source source) {
  static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
  const unsigned t = gbc_emu_thread();
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  gbc_emu_slots[t] = bits;
  __syncthreads();
  const unsigned lane = t % 32, warp = t - lane;
  const uint64_t got = gbc_emu_slots[warp + source(lane)];
  __syncthreads();
  T r;
  std::memcpy(&r, &got, sizeof(T));
  return r;
}
template <typename T>
static T __shfl_xor_sync(unsigned, T v, int lane_mask, int width) {
  return gbc_emu_exchange(v, [&](unsigned lane) {
    const unsigned segment = lane / width * width, src = lane ^ lane_mask;
    return src >= segment && src < segment + width ? src : lane;
  });
}
template <typename T>
static T __shfl_sync(unsigned, T v, int src_lane, int width) {
  return gbc_emu_exchange(v, [&](unsigned lane) { return lane / width * width + src_lane % width; });
}

/* Runs kernel(args) over the grid. */
template <typename Args>
static void gbc_emu_launch_kernel(void (*kernel)(Args), const Args& args, unsigned grid, unsigned block_x,
                                  unsigned block_y) {
  gridDim = dim3{grid, 1, 1};
  blockDim = dim3{block_x, block_y, 1};
  const unsigned threads = block_x * block_y;
  GbcEmuBarrier barrier(threads);
  gbc_emu_barrier = &barrier;
  gbc_emu_slots.assign(threads, 0);
  for (unsigned b = 0; b < grid; ++b) {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, b, t] {
        blockIdx = dim3{b, 0, 0};
        threadIdx = dim3{t % block_x, t / block_x, 0};
        kernel(args);
      });
    for (std::thread& th : pool) th.join();
  }
  gbc_emu_barrier = nullptr;
}

#endif /* GBC_CUDA_EMULATION_H_ */
