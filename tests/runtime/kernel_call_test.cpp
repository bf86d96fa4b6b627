// KernelCall (compiler/runtime/kernel_call.h), the one way gbc runs a lowered kernel: it allocates
// the outputs and matches eager, specializes anew only when a buffer's layout changed since the
// previous call, runs nothing when a kept dim is empty, and lets an observer watch every member
// node's value in the interpreter; and it asks for streaming stores (stream_stores.h) only for calls
// whose memory exceeds the last-level cache.
#include <ATen/ops/exp.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/runtime/stream_stores.h"
#include "tests/kernel/kernel_test_util.h"

namespace gbc {
namespace {

const std::string kModel = testing::model_text("  x: {shape: [N, 4]}\n",
                                               "  - {id: e, op: exp, args: [x]}\n"
                                               "  - {id: y, op: mul, args: [e, 2.0]}\n",
                                               "[y]", "dims: {N: [0, 8]}\n");

// The model's one fusion group, lowered, with a KernelCall on it.
struct OneKernel {
  Model model = testing::load(kModel);
  PartitionPlan plan = partition_block(model.graph, model.graph.body);
  LoweredKernel lowered;
  OneKernel() {
    EXPECT_EQ(plan.groups.size(), 1u) << print_partition(model.graph, model.graph.body, plan);
    lowered = lower_group(model.graph, model.graph.body, plan.groups.at(0), "k", {});
  }
  // Binds x in a fresh environment and returns it: y's tensor is allocated there, and the call
  // may run only while it lives.
  std::vector<RtValue> bind(KernelCall& call, const at::Tensor& x) {
    std::vector<RtValue> env(model.graph.values.size());
    env.at(static_cast<size_t>(model.graph.inputs.at(0).value)) = RtValue::of(x);
    call.bind(env, bind_dims(model.graph, {x}), c10::Device(c10::kCPU));
    return env;
  }
  const at::Tensor& y(const std::vector<RtValue>& env) const {
    return env.at(static_cast<size_t>(model.graph.outputs.at(0))).tensor;
  }
};

// Counts what an observer is shown.
class CountingObserver : public KernelObserver {
 public:
  void begin_kernel(const ObservedKernel& k) override {
    ++begun;
    for (const Node* n : k.nodes) ops.push_back(op_name(n->op));
    sizes = k.iteration_sizes;
  }
  void node_value(int node, int64_t, double) override { ++values[node]; }
  void end_kernel() override { ++ended; }
  int begun = 0, ended = 0;
  std::vector<std::string> ops;
  std::vector<int64_t> sizes;
  std::map<int, int64_t> values;
};

TEST(KernelCall, AllocatesTheOutputsAndMatchesEager) {
  OneKernel k;
  KernelCall call(k.model.graph, k.plan.groups[0], k.lowered);
  at::Tensor x = at::randn({5, 4});
  std::vector<RtValue> env = k.bind(call, x);
  const Specialization& spec = call.specialize();
  EXPECT_FALSE(call.writes_nothing());
  call.run(specialized_kernel(k.lowered.kernel, spec), {}, 1);
  EXPECT_TRUE(testing::close(k.y(env), at::exp(x) * 2, 1e-6, 0));
}

TEST(KernelCall, SpecializesAgainOnlyWhenALayoutChanged) {
  OneKernel k;
  KernelCall call(k.model.graph, k.plan.groups[0], k.lowered);
  bool changed = false;
  k.bind(call, at::randn({5, 4}));
  call.specialize(&changed);
  EXPECT_TRUE(changed);  // the first call
  k.bind(call, at::randn({5, 4}));
  call.specialize(&changed);
  EXPECT_FALSE(changed);  // other data, the same layout
  at::Tensor transposed = at::randn({4, 5}).t();
  std::vector<RtValue> env = k.bind(call, transposed);
  const Specialization& spec = call.specialize(&changed);
  EXPECT_TRUE(changed);  // x's strides differ
  call.run(specialized_kernel(k.lowered.kernel, spec), {}, 1);
  EXPECT_TRUE(testing::close(k.y(env), at::exp(transposed) * 2, 1e-6, 0));
  k.bind(call, at::randn({7, 4}));
  call.specialize(&changed);
  EXPECT_TRUE(changed);  // other sizes
}

TEST(KernelCall, AnObserverSeesEveryMemberNodeAtEveryElement) {
  OneKernel k;
  KernelCall call(k.model.graph, k.plan.groups[0], k.lowered);
  std::vector<RtValue> env = k.bind(call, at::randn({3, 4}));  // holds the bound tensors
  CountingObserver seen;
  call.run(specialized_kernel(k.lowered.kernel, call.specialize()), {}, 1, &seen);
  EXPECT_EQ(seen.begun, 1);
  EXPECT_EQ(seen.ended, 1);
  EXPECT_EQ(seen.ops, (std::vector<std::string>{"exp", "mul"}));
  EXPECT_EQ(seen.sizes, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(seen.values, (std::map<int, int64_t>{{0, 12}, {1, 12}}));
}

TEST(KernelCall, AnEmptyKeptDimRunsNothingButIsStillObserved) {
  OneKernel k;
  KernelCall call(k.model.graph, k.plan.groups[0], k.lowered);
  std::vector<RtValue> env = k.bind(call, at::randn({0, 4}));
  EXPECT_TRUE(call.writes_nothing());
  CountingObserver seen;
  call.run(specialized_kernel(k.lowered.kernel, call.specialize()), {}, 1, &seen);
  EXPECT_EQ(seen.begun, 1);
  EXPECT_EQ(seen.ended, 1);
  EXPECT_TRUE(seen.values.empty());
  EXPECT_EQ(k.y(env).sizes(), (std::vector<int64_t>{0, 4}));
}

// Sets GBCHECK_STREAM_STORES for the scope, then restores it.
class StreamStoresEnv {
 public:
  explicit StreamStoresEnv(const char* value) {
    if (const char* old = std::getenv(kName)) old_ = old;
    value ? setenv(kName, value, 1) : unsetenv(kName);
  }
  ~StreamStoresEnv() { old_ ? setenv(kName, old_->c_str(), 1) : unsetenv(kName); }

 private:
  static constexpr const char* kName = "GBCHECK_STREAM_STORES";
  std::optional<std::string> old_;
};

TEST(KernelCall, StreamsStoresOnlyWhenTheCallOutgrowsTheCacheOrIsTold) {
  OneKernel k;
  for (const auto& [env, want] : std::vector<std::pair<const char*, int32_t>>{{nullptr, 0}, {"always", 1}, {"never", 0}}) {
    StreamStoresEnv set(env);
    KernelCall call(k.model.graph, k.plan.groups[0], k.lowered);
    std::vector<RtValue> env_values = k.bind(call, at::randn({3, 4}));
    int32_t seen = -1;
    call.run(specialized_kernel(k.lowered.kernel, call.specialize()), [&](const GbcKernelArgs* a) { seen = a->stream_stores; }, 1);
    EXPECT_EQ(seen, want) << (env ? env : "(unset)");
  }
  StreamStoresEnv unset(nullptr);
  const int64_t cache = last_level_cache_bytes();
  EXPECT_GE(cache, int64_t{1} << 20) << "a last-level cache below 1 MiB: the sysfs or sysconf value was misread";
  EXPECT_FALSE(stream_stores_pay(cache));
  EXPECT_TRUE(stream_stores_pay(cache + 1));
}

TEST(StreamStores, MemorySpanCountsBroadcastDimsOnce) {
  const std::vector<int64_t> sizes = {4, 8, 16};
  EXPECT_EQ(memory_span_bytes(sizes.data(), std::vector<int64_t>{128, 16, 1}.data(), 3, 4), 4 * 8 * 16 * 4);
  EXPECT_EQ(memory_span_bytes(sizes.data(), std::vector<int64_t>{0, 16, 1}.data(), 3, 4), 8 * 16 * 4);  // expanded dim 0
  EXPECT_EQ(memory_span_bytes(sizes.data(), std::vector<int64_t>{0, 0, 1}.data(), 3, 2), 16 * 2);
  EXPECT_EQ(memory_span_bytes(sizes.data(), std::vector<int64_t>{1, 64, 4}.data(), 3, 4), (3 + 7 * 64 + 15 * 4 + 1) * 4);
  EXPECT_EQ(memory_span_bytes(std::vector<int64_t>{4, 0}.data(), std::vector<int64_t>{1, 4}.data(), 2, 4), 0);
  EXPECT_EQ(memory_span_bytes(nullptr, nullptr, 0, 8), 8);  // a scalar
}

}  // namespace
}  // namespace gbc
