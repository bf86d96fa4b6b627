// C++ for the CPU from kernel IR (kernel_ir.h): one translation unit per compiled graph holding
// all its kernels, compiled by cpu_compiler.h and called through GbcKernelFn (kernel_abi.h).
//
// Loop shapes, chosen so that GCC vectorizes them (-fopt-info-vec-optimized confirms it in
// tests/codegen/cpu_codegen_test.cpp):
// - Pointwise: `#pragma omp simd` over [begin, end) with restrict pointers; Strided buffers get
//   their offsets precomputed per block of GBC_BLOCK elements so the body still vectorizes.
//   A body with two or more costly float32 steps (exp, log, ...; tanh, sigmoid and silu count
//   two: the exp, then the rest) runs as staged loops: per block of GBC_BLOCK elements, a pass
//   per step writing a block array that later passes read, the last step in the stores' pass.
// - Reductions: per row o, each stage folds r into GBC_LANES accumulators (lane r % GBC_LANES,
//   a vectorized loop; GBC_LANES_WIDE where the kernel loads bool masks per element, so that the
//   byte loads do not narrow the vectors), then folds the lanes in order; full-level stores are a vectorized loop
//   over r; per-row stores follow the stages. Float sums therefore associate differently from the
//   interpreter's strictly sequential fold (the results agree to rounding; other combines are
//   exact), and identically on every machine.
//   A costly value (an exp, a tanh, ...) that one stage's pass computes and a later pass reads
//   again, like softmax's exp(x - max) in the sum and the store, is computed once per element and
//   kept in a per-thread row of scratch memory, for rows of up to GBC_ROW_CACHE_BYTES of kept
//   values; longer rows compute it again (each kernel has both row functions). The pass that
//   fills it computes the block's whole lane groups first, as staged loops, then folds them.
//   The first pass over a row prefetches the next row's contiguous inputs.
// - The column schedule (kir::Kernel::columns, chosen by specialize.h where the kept dims are the
//   contiguous ones: a sum over dim 0, a var over a middle dim): o = p * cols + q, and per block
//   of up to GBC_COLUMN_BLOCK columns each stage walks r outside a vectorized loop over q, folding
//   into one accumulator per column (four rows per loop, each column still in order of r); full-
//   level stores are one more such pass. Each column folds sequentially, whatever the threads.
//   Pointwise kernels with Strided buffers walk rows of `cols` elements the same way: each
//   buffer's offset once per row, then `base + q * step` (a gather only where the step is not 0
//   or 1), instead of a precomputed offset per element.
// - Work above GBC_PARALLEL_MIN_WORK elements is split over OpenMP threads (elements or rows),
//   never more than GbcKernelArgs::num_threads.
// - Large contiguous outputs are advised onto transparent huge pages before the first touch
//   (gbc_advise_huge_pages): fresh outputs otherwise cost one page fault per 4 KiB.
// Outputs may share memory with inputs only element for element (an in-place op).
// Tests: tests/codegen/cpu_codegen_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "compiler/kernel/kernel_ir.h"

namespace gbc::codegen {

/// The functions of one kernel: `extern "C" void NAME(const GbcKernelArgs* a)` and its helpers,
/// preceded by the kernel's listing as a comment. Needs the headers generate_cpu_source() adds.
std::string generate_cpu_kernel(const kir::Kernel& kernel);

/// kernel_abi.h, kernel_std.h, kernel_prelude.h and kernel_support.h verbatim: what every translation unit
/// holds after its first line (the part the CPU compiler precompiles once).
const std::string& cpu_kernel_header();

/// A complete translation unit: a comment line naming the graph, cpu_kernel_header(), then every
/// kernel. Kernel names must be distinct C identifiers.
std::string generate_cpu_source(const std::vector<kir::Kernel>& kernels, const std::string& graph_name);

}  // namespace gbc::codegen
