// Per-step wall times of compiled graphs, for `gbcheck bench --profile`: every fused kernel, extern
// call, ATen op and eager island gets a row with its calls and total time, like torch.profiler's
// key_averages(). Off unless a profiler is attached, so the fast path pays one null check per step.
// Tests: tests/runtime/kernel_plan_test.cpp (ProfilerGetsARowPerStep).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gbc {

struct ProfileRow {
  std::string name;  // "fused_0 (a, b, c)", "extern matmul", "island print"
  std::string kind;  // kernel | extern | aten | island | cached (checking param-only results, param_cache.h)
  int64_t calls = 0;
  double total_ms = 0.0;
  double avg_us() const { return calls ? total_ms * 1000.0 / static_cast<double>(calls) : 0.0; }
};

class Profiler {
 public:
  void add(const std::string& name, const std::string& kind, std::chrono::steady_clock::duration elapsed);
  /// Rows by total time, largest first.
  std::vector<ProfileRow> rows() const;
  void clear() { rows_.clear(); }
  /// Called when a step's timing starts and ends: on a GPU, a device synchronization, so that a
  /// row holds the step's device time rather than the time to queue it.
  void set_synchronize(std::function<void()> synchronize) { synchronize_ = std::move(synchronize); }
  void synchronize() const {
    if (synchronize_) synchronize_();
  }

 private:
  std::map<std::string, ProfileRow> rows_;
  std::function<void()> synchronize_;
};

/// Times a scope into a profiler (nothing when it is null).
class ProfileScope {
 public:
  ProfileScope(Profiler* profiler, const std::string& name, const char* kind)
      : profiler_(profiler), name_(profiler ? &name : nullptr), kind_(kind) {
    if (profiler_) {
      profiler_->synchronize();
      start_ = std::chrono::steady_clock::now();
    }
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;
  ~ProfileScope() {
    if (!profiler_) return;
    profiler_->synchronize();
    profiler_->add(*name_, kind_, std::chrono::steady_clock::now() - start_);
  }

 private:
  Profiler* profiler_;
  const std::string* name_;
  const char* kind_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace gbc
