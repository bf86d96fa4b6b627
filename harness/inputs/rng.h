// A small, fully specified random number generator (xoshiro256** seeded by splitmix64). Inputs
// must be the same on every machine and LibTorch version for `--seed S --case K` to replay a
// failure, which neither ATen's generators nor std:: distributions promise.
#pragma once

#include <cmath>
#include <cstdint>

namespace gbc {

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Mixes two seeds into one (for per-case and per-tensor streams).
inline uint64_t mix_seed(uint64_t a, uint64_t b) {
  uint64_t s = a ^ (b * 0xd1b54a32d192ed03ULL);
  return splitmix64(s);
}

class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& w : s_) w = splitmix64(seed);
  }
  uint64_t next() {
    uint64_t result = rotl(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [lo, hi].
  int64_t integer(int64_t lo, int64_t hi) {
    uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    return span == 0 ? static_cast<int64_t>(next()) : lo + static_cast<int64_t>(next() % span);
  }
  /// Standard normal (Box-Muller; the second value is discarded to keep the stream simple).
  double normal() {
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace gbc
