#include "compiler/codegen/cuda_tuning.h"

#include <cstdlib>
#include <cstring>

namespace gbc::codegen {
namespace {

// The integer in $name when it is set and within [low, high]; otherwise fallback.
int env_int(const char* name, int low, int high, int fallback) {
  const char* env = std::getenv(name);
  if (!env || !*env) return fallback;
  char* end = nullptr;
  const long v = std::strtol(env, &end, 10);
  return *end == '\0' && v >= low && v <= high ? static_cast<int>(v) : fallback;
}

}  // namespace

const CudaTuning& cuda_tuning() {
  static const CudaTuning tuning = [] {
    CudaTuning t;
    const int elements = env_int("GBCHECK_CUDA_ROW_ELEMENTS", 4, 64, 0);
    t.row_elements = (elements & (elements - 1)) == 0 ? elements : 0;
    t.min_blocks = env_int("GBCHECK_CUDA_MIN_BLOCKS", 0, 32, t.min_blocks);
    t.unroll = env_int("GBCHECK_CUDA_UNROLL", 1, 16, t.unroll);
    t.pointwise_unroll = env_int("GBCHECK_CUDA_POINTWISE_UNROLL", 1, 8, t.pointwise_unroll);
    t.prefetch = env_int("GBCHECK_CUDA_PREFETCH", 0, 1, t.prefetch ? 1 : 0) == 1;
    if (const char* grid = std::getenv("GBCHECK_CUDA_ROW_GRID")) {
      if (std::strcmp(grid, "resident") == 0) t.resident_grid = true;
      if (std::strcmp(grid, "rows") == 0) t.resident_grid = false;
    }
    return t;
  }();
  return tuning;
}

}  // namespace gbc::codegen
