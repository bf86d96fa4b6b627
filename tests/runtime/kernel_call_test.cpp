// KernelCall (compiler/runtime/kernel_call.h), the one way gbc runs a lowered kernel: it allocates
// the outputs and matches eager, specializes anew only when a buffer's layout changed since the
// previous call, runs nothing when a kept dim is empty, and lets an observer watch every member
// node's value in the interpreter.
#include <ATen/ops/exp.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

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

}  // namespace
}  // namespace gbc
