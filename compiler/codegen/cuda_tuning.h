// Choices of gbc's CUDA schedules that only a GPU can settle. Each has a default measured on the
// GPU machine (docs/performance.md, GPU) and an environment variable that overrides it, read once
// per process, so that one run there can measure the alternatives (ci/gpu_checks.sh, step sweep):
//   GBCHECK_CUDA_ROW_ELEMENTS  elements of each cached input per thread in the Cached row schedule
//                              (a power of two from 4 to 64; default: cuda_codegen.cpp's choice)
//   GBCHECK_CUDA_MIN_BLOCKS    reductions' __launch_bounds__ minimum of resident blocks per
//                              multiprocessor (0: none; default 2, at most 1024 threads' worth),
//                              which caps their registers
//   GBCHECK_CUDA_UNROLL        vector loads in flight per thread in the schedules that read rows
//                              from memory (the split sum, long rows): 1 to 16
//   GBCHECK_CUDA_POINTWISE_UNROLL  vector steps of a pointwise kernel's grid-stride loop unrolled
//                              (1 to 8), so that several steps' loads are in flight per thread
//   GBCHECK_CUDA_PREFETCH      1: a block prefetches its next row into L2 while it folds the current
//                              one (Cached schedule)
//   GBCHECK_CUDA_ROW_GRID      "resident": a row kernel's grid is as many blocks as fit on the device
//                              at once, each walking rows; "rows" (default): a block per row, up to
//                              32 per multiprocessor
// Every choice but the grid (a launch choice) changes the kernel source, so the module cache keeps
// the variants apart.
#pragma once

namespace gbc::codegen {

struct CudaTuning {
  int row_elements = 0;  // 0: the default choice
  int min_blocks = 2;  // measured: layer_norm 8192 -9%, sum 64M -5%, softmax level (H200)
  int unroll = 4;
  int pointwise_unroll = 1;
  bool prefetch = false;
  bool resident_grid = false;
};

/// The defaults, with the environment's overrides (invalid values are ignored).
const CudaTuning& cuda_tuning();

}  // namespace gbc::codegen
