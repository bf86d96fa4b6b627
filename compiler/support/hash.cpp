#include "compiler/support/hash.h"

#include <cstdio>

namespace gbc {

uint64_t fnv1a64(std::string_view data, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string content_hash(std::string_view data) {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(fnv1a64(data)),
                static_cast<unsigned long long>(fnv1a64(data, 0x84222325cbf29ce4ULL)));
  return buf;
}

}  // namespace gbc
