// Content hashes for caches (compiled kernels, reducer candidates) and failure signatures.
// FNV-1a over 64 bits, twice with different offsets for 128 bits: stable across runs, machines
// and compilers, which std::hash is not.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gbc {

uint64_t fnv1a64(std::string_view data, uint64_t seed = 0xcbf29ce484222325ULL);
/// 32 hex digits; what caches use as file names.
std::string content_hash(std::string_view data);

}  // namespace gbc
