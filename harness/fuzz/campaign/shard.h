// How a fuzz campaign splits its seed space. Position k of the space checks the graph of seed
// `--seed` + k; shard i of N (`--shard i/N`, 0-based) owns the positions k = i (mod N), and worker
// j of its J jobs the shard's n-th positions with n = j (mod J). So N machines never repeat each
// other's graphs, and N shards over `--cases C` check exactly the graphs of one run over C.
// Tested in tests/fuzz/fuzz_campaign_test.cpp.
#pragma once

#include <cstdint>
#include <string>

namespace gbc {

struct Shard {
  int index = 0;
  int count = 1;

  /// Parses "i/N" with 0 <= i < N. Throws std::invalid_argument with a message for the user.
  static Shard parse(const std::string& text);
  std::string str() const { return std::to_string(index) + "/" + std::to_string(count); }

  /// How many of the positions 0..space-1 this shard owns.
  int64_t owned(int64_t space) const { return space > index ? (space - index + count - 1) / count : 0; }

  /// The seed-space position of worker `job` of `jobs`'s `n`-th graph (n = 0, 1, ...).
  int64_t position(int job, int jobs, int64_t n) const {
    return index + static_cast<int64_t>(count) * (job + static_cast<int64_t>(jobs) * n);
  }
};

}  // namespace gbc
