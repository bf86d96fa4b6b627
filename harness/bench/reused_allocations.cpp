#include "harness/bench/reused_allocations.h"

#include <c10/core/Allocator.h>

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace gbc {
namespace {

// A block the cache handed out: the underlying allocator's DataPtr, kept whole so that freeing it
// for good is that allocator's own deleter.
struct Block {
  c10::DataPtr inner;
  size_t bytes = 0;
};

// Installed for the lifetime of a ReusedAllocations, never destroyed (c10 keeps a raw pointer to
// it, and tensors allocated through it may outlive the scope).
class BlockCache final : public c10::Allocator {
 public:
  static BlockCache& get() {
    static BlockCache* cache = new BlockCache();
    return *cache;
  }

  void start(c10::Allocator* underlying) {
    std::lock_guard<std::mutex> lock(mutex_);
    underlying_ = underlying;
    caching_ = true;
  }
  void stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    caching_ = false;
    for (auto& [bytes, blocks] : free_)
      for (Block* b : blocks) delete b;
    free_.clear();
  }

  // LibTorch 1.13 declares allocate const, 2.x not: whichever the base declares is overridden.
  c10::DataPtr allocate(size_t bytes) const { return const_cast<BlockCache*>(this)->take(bytes); }
  c10::DataPtr allocate(size_t bytes) { return take(bytes); }
  // Pure virtual in LibTorch 2.x (Allocator::clone), absent in 1.13.
  void copy_data(void* dest, const void* src, size_t count) const { std::memcpy(dest, src, count); }

 private:
  c10::DataPtr take(size_t bytes) {
    Block* block = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::vector<Block*>& blocks = free_[bytes];
      if (!blocks.empty()) {
        block = blocks.back();
        blocks.pop_back();
      }
    }
    if (!block) block = new Block{underlying_->allocate(bytes), bytes};
    return c10::DataPtr(block->inner.get(), block, &BlockCache::release, c10::Device(c10::kCPU));
  }

  static void release(void* context) {
    Block* block = static_cast<Block*>(context);
    BlockCache& cache = get();
    {
      std::lock_guard<std::mutex> lock(cache.mutex_);
      if (cache.caching_) {
        cache.free_[block->bytes].push_back(block);
        return;
      }
    }
    delete block;
  }

  std::mutex mutex_;
  c10::Allocator* underlying_ = nullptr;
  bool caching_ = false;
  std::unordered_map<size_t, std::vector<Block*>> free_;
};

c10::Allocator* g_previous = nullptr;

}  // namespace

ReusedAllocations::ReusedAllocations() {
  BlockCache& cache = BlockCache::get();
  c10::Allocator* current = c10::GetAllocator(c10::kCPU);
  if (current == &cache) return;  // an enclosing scope already reuses
  cache.start(current);
  c10::SetAllocator(c10::kCPU, &cache);
  active_ = c10::GetAllocator(c10::kCPU) == &cache;
  if (active_) g_previous = current;
  else cache.stop();
}

ReusedAllocations::~ReusedAllocations() {
  if (!active_) return;
  c10::SetAllocator(c10::kCPU, g_previous);
  BlockCache::get().stop();
}

}  // namespace gbc
