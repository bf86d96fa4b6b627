// CUDA C++ for NVRTC from kernel IR (kernel_ir.h), with the calling convention and launch shape
// of cuda_kernel_abi.h, and its compilation to PTX.
//
// Loop shapes:
// - Pointwise: a grid-stride loop. When the kernel has Contiguous buffers and their pointers are
//   aligned (checked on the device), each thread moves cuda_vector_width() consecutive elements
//   of each of them in one vector access of up to 16 bytes; the rest of [0, numel), and every
//   element of unaligned calls, take the scalar loop.
// - Reductions: blockDim.x threads per row (blockDim.y rows per block for short rows); each
//   stage folds the thread's elements of the row, then across the row with warp shuffles and, for
//   rows of several warps, shared memory (gbc_block_fold in kernel_support.h); every thread gets
//   the result, so later stages and the stores of a softmax- or layer_norm-shaped kernel run in
//   the same kernel. A thread's elements of the row are reached by one of three schedules
//   (CudaRowLayout):
//   * Cached: rows of at most CudaRowLayout::elements elements per thread (about 128 bytes of
//     registers across the cached inputs) whose Full-level Contiguous inputs are aligned: each
//     thread loads its elements of those inputs once, with vector accesses, into registers that
//     every stage and the stores read (one pass over memory instead of one per stage), and stores
//     Contiguous outputs with vector accesses. Many elements per thread keep blocks small (256
//     threads for a row of 8192 floats), so several rows are resident per multiprocessor and one
//     row's loads overlap another's folds and stores. A costly value that a later pass reads
//     again (softmax's exp(x - max)) is computed once and kept in the registers of a cached input
//     no later pass reads (reused_values.h);
//   * Vector: longer rows, aligned: each stage reads V consecutive elements per vector access,
//     four accesses in flight per thread (the loop is unrolled; cuda_tuning.h overrides it);
//   * Scalar: anything else: element by element.
//   Few long rows of a one-stage reduction (a sum of a whole tensor) are split: cuda_launch_shape
//   gives each row `splits` blocks, each folds its part (vector or scalar, as above) into a
//   workspace, and the last block of the row to finish folds the parts in a fixed order
//   (deterministic) and stores the result. Float sums associate differently from the
//   interpreter's sequential fold (the results agree to rounding).
//   Which schedule a call takes is its class (kir::CudaRows, cuda_row_class): a kernel of class
//   All (kir::Kernel::cuda_rows) holds every schedule and picks one on the device per call; the
//   runtime compiles one variant per class its calls take instead (kernel_region.h's
//   refine_variant), each holding only its schedule: NVRTC and ptxas take superlinearly longer
//   with every schedule a kernel holds (docs/performance.md, "## GPU", has the numbers). The
//   launcher checks that every call of such a variant is of its class.
// float16/bfloat16 are stored as bits and computed in float32, as on the CPU; transcendentals are
// CUDA's own (expf, ...). Tests: tests/codegen/cuda_codegen_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "compiler/codegen/cuda_kernel_abi.h"
#include "compiler/cuda/nvrtc_compiler.h"
#include "compiler/kernel/kernel_ir.h"

namespace gbc::codegen {

/// Empty when the kernel fits the CUDA calling convention; otherwise why not (too many buffers or
/// host scalars for GbcCudaKernelArgs). Such kernels stay on another path.
std::string cuda_unsupported_reason(const kir::Kernel& kernel);

/// Register bytes per thread that the Cached row schedule gives its cached inputs together.
constexpr int kCudaCachedRowBytes = 128;
/// Threads of a reduction block at most: 16384 elements of a row in registers, at most 1024.
/// Also the kernels' __launch_bounds__, so that every launch has the registers it needs.
unsigned cuda_max_row_threads(int elements);

/// Which buffers of a reduction kernel the vector and cached row schedules move as vectors.
struct CudaRowLayout {
  int width = 1;            // elements per vector access; 1: no vector schedules
  int elements = 8;         // elements of each cached input per thread (Cached schedule), a power of two
  std::vector<int> loaded;  // Full-level Contiguous inputs (read as vectors; cached in registers)
  std::vector<int> stored;  // Full-level Contiguous outputs that are stored (written as vectors)
  bool splittable = false;  // one non-ArgMax stage and per-row stores only: rows may be split
  /// Vector steps per thread that fill `elements`.
  int items() const { return width > 1 ? elements / width : elements; }
  std::vector<int> vector_buffers() const;
};
CudaRowLayout cuda_row_layout(const kir::Kernel& kernel);

/// The schedule a call of a reduction takes, exactly as a kernel of class All chooses it on the
/// device under cuda_launch_shape's launch: split rows when cuda_launch_shape splits them; the
/// vector schedules (gbc_vec) when rows start on vector boundaries (inner % width == 0) and the
/// vector buffers are aligned (`vector_aligned`, cuda_vector_aligned); Cached when besides the row
/// fits `elements` per thread of cuda_launch_shape's block_x; Scalar otherwise. The kernel overload
/// gives All for pointwise kernels (they have no classes).
kir::CudaRows cuda_row_class(const CudaRowLayout& layout, int64_t outer, int64_t inner, bool vector_aligned,
                             int multiprocessors);
kir::CudaRows cuda_row_class(const kir::Kernel& kernel, int64_t outer, int64_t inner, bool vector_aligned,
                             int multiprocessors);
/// Whether the layout's vector buffers (CudaRowLayout::vector_buffers) start on their vector
/// boundaries, as the kernels check with gbc_aligned; data[b] is buffer b's pointer. Allocates nothing.
bool cuda_vector_aligned(const kir::Kernel& kernel, const CudaRowLayout& layout, const void* const* data);
/// cuda_row_class of a launch with these arguments (`layout` is cuda_row_layout(kernel)).
kir::CudaRows cuda_call_row_class(const kir::Kernel& kernel, const CudaRowLayout& layout, const GbcCudaKernelArgs& args,
                                  int multiprocessors);

/// Elements per thread of a pointwise kernel's vector path: 16 bytes of its narrowest Contiguous
/// buffer, at most 8; 1 when it has no such path (reductions, or no Contiguous buffer).
int cuda_vector_width(const kir::Kernel& kernel);

/// `extern "C" __global__ void NAME(const __grid_constant__ GbcCudaKernelArgs a)`, preceded by
/// the kernel's listing as a comment. Needs the headers generate_cuda_source() adds.
std::string generate_cuda_kernel(const kir::Kernel& kernel);

/// A complete NVRTC source: kernel_prelude.h, kernel_abi.h, cuda_kernel_abi.h and
/// kernel_support.h verbatim, then every kernel. InternalError for unsupported kernels.
std::string generate_cuda_source(const std::vector<kir::Kernel>& kernels, const std::string& graph_name);

struct CudaLaunchShape {
  unsigned grid = 1;
  unsigned block_x = 1;
  unsigned block_y = 1;
  int64_t splits = 1;  // reductions: blocks per row (> 1 needs a workspace, cuda_split_workspace_bytes)
};
/// A launch that meets the kernel's contract for these sizes: 256 threads per block for pointwise
/// kernels; for reductions a warp or less per row of up to 32 elements (several rows per block), a
/// warp per row up to 512 elements, then about CudaRowLayout::elements per thread, from 64 threads
/// up to cuda_max_row_threads; rows of a
/// splittable kernel fewer than the multiprocessors and of 16384 elements or more get several
/// blocks each: as many blocks in all as are resident at once (`split_blocks_per_multiprocessor`
/// of cuda_split_threads() each, which the runtime asks the driver's occupancy calculator for),
/// so the parts run in one wave with no tail. The grid is capped at 32 blocks per multiprocessor
/// (the kernels loop).
CudaLaunchShape cuda_launch_shape(const kir::Kernel& kernel, const GbcCudaKernelArgs& args, int multiprocessors,
                                  int split_blocks_per_multiprocessor = 4);

/// Threads per block of a split row (cuda_launch_shape with splits > 1).
unsigned cuda_split_threads(const kir::Kernel& kernel);

/// Device bytes a split launch needs in GbcCudaKernelArgs::workspace: the rows' counters (zero
/// before the first launch; the kernel leaves them zero) and their parts.
size_t cuda_split_workspace_bytes(int64_t outer, int64_t splits);

/// The parameter of a launch, from host-side arguments whose buffers hold device pointers.
GbcCudaKernelArgs make_cuda_args(const kir::Kernel& kernel, const GbcKernelArgs& args);

struct CudaPtx {
  CompileResult build;  // PTX in build.binary when build.ok; NVRTC's log otherwise
  bool cache_hit = false;
};
/// Compiles a graph's source (generate_cuda_source) to PTX for compute capability arch (80, 90,
/// ...) with NvrtcCompiler, through the on-disk ModuleCache unless use_cache is false; its folder is
/// cache_dir, or ModuleCache::default_dir() when empty.
CudaPtx compile_cuda_ptx(const std::string& source, int arch, bool use_cache = true, const std::string& cache_dir = "");

}  // namespace gbc::codegen
