// Bench-only: while a ReusedAllocations lives, ATen's CPU allocations (eager's outputs and
// intermediates, gbc's kernel outputs, which its runtime allocates anew with at::empty on every
// call) are served from a cache that keeps each freed block and hands it to the next allocation
// of the same byte count. Outputs are then written into memory that is already mapped and
// touched, as with a caching allocator or out= buffers, so `gbcheck bench` can time kernels apart
// from the page faults of fresh memory (glibc maps every block above 32 MiB anew, and a first
// touch costs about 14 us per 4 KiB page on the CI machine). Nothing outside `gbcheck bench` uses it.
// Test: tests/cli/bench_command_test.cpp.
#pragma once

namespace gbc {

class ReusedAllocations {
 public:
  /// Installs the cache as ATen's CPU allocator (in front of the one installed before).
  ReusedAllocations();
  /// Restores the previous allocator and frees the cached blocks; blocks still in use are freed
  /// when their tensors are.
  ~ReusedAllocations();
  ReusedAllocations(const ReusedAllocations&) = delete;
  ReusedAllocations& operator=(const ReusedAllocations&) = delete;

  /// False when the allocator could not be replaced (one of a higher priority is installed):
  /// allocations are then fresh as usual.
  bool active() const { return active_; }

 private:
  bool active_ = false;
};

}  // namespace gbc
