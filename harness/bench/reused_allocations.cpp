#include "harness/bench/reused_allocations.h"

#include <c10/core/Allocator.h>

#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace gbc {
namespace {

// A block of the underlying allocator, kept whole so that freeing it for good is that
// allocator's own deleter.
struct Block {
  c10::DataPtr inner;
  size_t bytes = 0;
};

// Installed for the lifetime of a ReusedAllocations, never destroyed (c10 keeps a raw pointer to
// it, and tensors allocated through it may outlive the scope). Its DataPtrs are simple (context ==
// data, one raw deleter), as ATen's raw_allocate/raw_deallocate users require.
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
  c10::DeleterFnPtr raw_deleter() const override { return &BlockCache::release; }
  // Pure virtual in LibTorch 2.x (Allocator::clone), absent in 1.13.
  void copy_data(void* dest, const void* src, size_t count) const { std::memcpy(dest, src, count); }

 private:
  c10::DataPtr take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    Block* block = nullptr;
    std::vector<Block*>& blocks = free_[bytes];
    if (!blocks.empty()) {
      block = blocks.back();
      blocks.pop_back();
    } else {
      block = new Block{underlying_->allocate(bytes), bytes};
    }
    void* data = block->inner.get();
    if (!data) {  // zero bytes: nothing to keep
      delete block;
      return c10::DataPtr(nullptr, c10::Device(c10::kCPU));
    }
    in_use_[data] = block;
    return c10::DataPtr(data, data, &BlockCache::release, c10::Device(c10::kCPU));
  }

  static void release(void* data) {
    BlockCache& cache = get();
    Block* block = nullptr;
    {
      std::lock_guard<std::mutex> lock(cache.mutex_);
      auto it = cache.in_use_.find(data);
      if (it == cache.in_use_.end()) return;
      block = it->second;
      cache.in_use_.erase(it);
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
  std::unordered_map<void*, Block*> in_use_;
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
