#include "compiler/runtime/stream_stores.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace gbc {
namespace {

// sysfs: the cache of the highest level cpu0 reports ("32768K").
int64_t sysfs_last_level_cache_bytes() {
  int best_level = 0;
  int64_t best_bytes = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level"), size_file(dir + "size"), type_file(dir + "type");
    int level = 0;
    std::string size, type;
    if (!(level_file >> level) || !(size_file >> size) || !(type_file >> type) || type == "Instruction") continue;
    char* end = nullptr;
    int64_t bytes = std::strtoll(size.c_str(), &end, 10);
    if (end && (*end == 'K' || *end == 'k')) bytes <<= 10;
    if (end && (*end == 'M' || *end == 'm')) bytes <<= 20;
    if (level > best_level && bytes > 0) {
      best_level = level;
      best_bytes = bytes;
    }
  }
  return best_bytes;
}

}  // namespace

int64_t last_level_cache_bytes() {
  static const int64_t bytes = [] {
    if (int64_t b = sysfs_last_level_cache_bytes(); b > 0) return b;
#if defined(_SC_LEVEL3_CACHE_SIZE)
    if (long b = sysconf(_SC_LEVEL3_CACHE_SIZE); b > 0) return static_cast<int64_t>(b);
#endif
    return int64_t{32} << 20;
  }();
  return bytes;
}

bool stream_stores_pay(int64_t footprint_bytes) {
  if (const char* env = std::getenv("GBCHECK_STREAM_STORES"); env && *env) {
    if (std::strcmp(env, "always") == 0) return true;
    if (std::strcmp(env, "never") == 0) return false;
  }
  return footprint_bytes > last_level_cache_bytes();
}

int64_t memory_span_bytes(const int64_t* sizes, const int64_t* strides, int64_t rank, int64_t element_size) {
  int64_t last = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (sizes[d] == 0) return 0;
    last += (sizes[d] - 1) * (strides[d] < 0 ? -strides[d] : strides[d]);
  }
  return (last + 1) * element_size;
}

}  // namespace gbc
