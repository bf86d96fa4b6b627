// Layout specialization of a lowered kernel: from the concrete sizes and strides of each buffer,
// choose what compiled code may assume about its indexing (kir::IndexKind), the per-call strides
// (GbcBufferArg), and a layout key under which the runtime guards and caches compiled variants.
//
// A buffer's layout is given in iteration order: pointwise kernels iterate iter_shape; reduction
// kernels the kept dims, then the reduced dims (full level), or the kept dims alone (outer level).
// iteration_layout() derives it from a tensor's own sizes and strides (broadcast dims get stride 0).
// Index kinds, from the most to the least specialized:
//   Contiguous  offset = L, the linear iteration index (i; o * inner + r; or o)
//   Scalar      offset = 0
//   Affine      offset = i * s0, or o * s0 + r * s1 (outer level: o * s0)
//   Strided     offset = sum of idx[d] * strides[d], where idx unflattens L over sizes (row-major);
//               size-1 dims are dropped and mergeable neighbours merged first, so `rank` is small.
// The column schedule (CPU reductions, kir::Kernel::columns): when the trailing kept dims, merged
// into one index q of `columns` elements, step by 1 through the full-level inputs while the
// reduced dims do not (a sum over dim 0, a var over a middle dim, a layer_norm of a transposed
// view), o is split as p * columns + q and the CPU walks r outside q, the inputs in memory order.
// Index kinds stay those of (o, r), so every other target and the interpreter ignore it; each
// full-level buffer only adds how q steps through it (kir::Buffer::col_step, BufferSpec::sq).
// Pointwise kernels with a Strided buffer (a [C, 1, 1] batch_norm scale, a permuted input) take
// the same split, i = p * columns + q, q the trailing dims every buffer steps through with one
// stride: each buffer's offset is computed once per p instead of once per element.
// Tests: tests/kernel/specialize_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/kernel/kernel_abi.h"
#include "compiler/kernel/lower.h"

namespace gbc {

/// One buffer as a kernel iterates it: sizes and strides (in elements) in iteration order.
struct BufferLayout {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
};

/// The concrete iteration sizes of a lowered kernel (iter_shape evaluated), in iter_shape's order.
std::vector<int64_t> iteration_sizes(const LoweredKernel& kernel, const DimBindings& bindings);

/// Buffer `buffer` of the kernel, held by a tensor with these sizes and strides (its graph value's
/// shape), as the kernel iterates it. InternalError when the sizes do not fit the iteration space.
BufferLayout iteration_layout(const LoweredKernel& kernel, size_t buffer, const std::vector<int64_t>& sizes,
                              const std::vector<int64_t>& strides, const std::vector<int64_t>& iter_sizes);

/// What one buffer's index kind is and the strides the kernel receives for it.
struct BufferSpec {
  kir::IndexKind index = kir::IndexKind::Contiguous;
  int64_t s0 = 0, s1 = 0;       // Affine
  bool r_contiguous = false;    // a reduction's full level: Affine with s1 == 1, or Strided rows (kir::Buffer)
  // A reduction's full-level input constant along r (every reduced dim broadcast: a per-channel
  // mean in a sum over H and W): indexed per o like an outer-level buffer, one load per row.
  bool per_row = false;
  std::vector<int64_t> sizes;   // Strided (rank = sizes.size())
  std::vector<int64_t> strides;
  int col_step = -1;            // column schedule, full level: q's stride 0, 1, or 2 (sq, at run time)
  int64_t sq = 0;
};

struct Specialization {
  std::vector<BufferSpec> buffers;
  int64_t columns = 0;  // the column schedule's q count (0: rows)
  /// One token per buffer ("C", "S", "A", "Ar" (r contiguous), "T<rank>", "T<rank>r" (rows contiguous); "o" first for
  /// per_row), comma-separated, then for the
  /// column schedule "|q" and each buffer's col_step ("0", "1", "s", "-" per o): kernels compiled for equal
  /// keys are interchangeable.
  std::string layout_key;
};

/// Chooses index kinds for buffers with the given layouts (one per kernel buffer, iteration order).
Specialization specialize_layouts(const LoweredKernel& kernel, const std::vector<BufferLayout>& layouts);

/// The kernel with each buffer's index kind and rank set: what the code generators compile.
kir::Kernel specialized_kernel(const kir::Kernel& kernel, const Specialization& spec);

/// A reduction's rows for iteration sizes: outer, the product of the kept dims, and inner, that
/// of the reduced dims (iterated last, flattened); GbcKernelArgs::outer and inner.
struct RowSizes {
  int64_t outer = 1, inner = 1;
};
RowSizes row_sizes(const LoweredKernel& kernel, const std::vector<int64_t>& iter_sizes);

/// GbcKernelArgs with the storage they point to, filled from data pointers (one per buffer,
/// inputs then outputs), the iteration sizes and host scalars. Copyable; get() points into this
/// object, so call it again after a copy.
class KernelArgs {
 public:
  KernelArgs(const LoweredKernel& kernel, const Specialization& spec, const std::vector<void*>& data,
             const std::vector<int64_t>& iter_sizes, std::vector<double> scalars, int32_t num_threads = 1);
  const GbcKernelArgs* get();
  int64_t numel() const { return args_.numel; }
  /// GbcKernelArgs::stream_stores: CPU kernels write their contiguous outputs past the caches.
  void set_stream_stores(bool on) { args_.stream_stores = on ? 1 : 0; }

 private:
  std::vector<GbcBufferArg> buffers_;
  std::vector<double> scalars_;
  GbcKernelArgs args_{};
};

}  // namespace gbc
