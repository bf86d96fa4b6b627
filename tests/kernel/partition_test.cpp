// The fusion partitioner (compiler/partition/partition.h) on known graphs: chains fuse, decomposed
// normalizations become one reduction kernel, externs, shape changes and barriers split groups,
// and the step order is a valid schedule on generated graphs.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "compiler/partition/partition.h"
#include "tests/kernel/kernel_test_util.h"

namespace gbc {
namespace {

using testing::member_names;
using Names = std::vector<std::string>;

Model model(const std::string& inputs, const std::string& graph, const std::string& outputs,
            const std::string& extra = "") {
  return testing::load(testing::model_text(inputs, graph, outputs, extra));
}

std::vector<std::string> value_names(const Graph& g, const std::vector<ValueId>& values) {
  std::vector<std::string> out;
  for (ValueId v : values) out.push_back(g.name_of(v));
  return out;
}

// Every node in exactly one step, and every step after the producers of what it reads.
void expect_valid_schedule(const Graph& g, const PartitionPlan& plan) {
  const Block& body = g.body;
  std::vector<int> step_of(body.nodes.size(), -1);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step& step = plan.steps[s];
    std::vector<size_t> nodes = step.kind == Step::Kind::Kernel ? plan.groups.at(step.index).nodes
                                                                : std::vector<size_t>{step.index};
    for (size_t n : nodes) {
      ASSERT_EQ(step_of[n], -1) << "node " << n << " in two steps";
      step_of[n] = static_cast<int>(s);
    }
  }
  std::map<ValueId, size_t> producer;
  for (size_t n = 0; n < body.nodes.size(); ++n) {
    ASSERT_GE(step_of[n], 0) << "node " << n << " in no step";
    for (ValueId o : body.nodes[n].outputs) producer[o] = n;
  }
  for (size_t n = 0; n < body.nodes.size(); ++n) {
    for (const Arg& a : body.nodes[n].args) {
      if (a.is_value() && producer.count(a.value)) {
        EXPECT_LE(step_of[producer[a.value]], step_of[n]) << "node " << n << " runs before its input";
      }
    }
  }
}

// Runs the plan step by step (kernels in the interpreter, the rest on ATen) and compares the
// graph's outputs with an eager run.
void expect_plan_matches_eager(const Model& m, const PartitionPlan& plan) {
  const Graph& g = m.graph;
  std::vector<at::Tensor> inputs = testing::make_inputs(m);
  DimBindings bindings = bind_dims(g, inputs);
  std::map<ValueId, RtValue> env;
  for (size_t i = 0; i < inputs.size(); ++i) env[g.inputs[i].value] = RtValue::of(inputs[i]);
  for (const Step& step : plan.steps) {
    if (step.kind == Step::Kind::Kernel) {
      const FusionGroup& group = plan.groups[step.index];
      testing::GroupRun run = testing::run_group(g, group, env, bindings);
      for (size_t k = 0; k < group.outputs.size(); ++k) env[group.outputs[k]] = RtValue::of(run.outputs[k]);
      continue;
    }
    const Node& node = g.body.nodes[step.index];
    std::vector<RtValue> args;
    for (const Arg& a : node.args) args.push_back(a.is_value() ? env.at(a.value) : RtValue::of(a.scalar));
    std::vector<RtValue> out = run_aten_node(g, node, args, bindings, nullptr);
    for (size_t k = 0; k < out.size(); ++k) env[node.outputs[k]] = out[k];
  }
  std::vector<at::Tensor> want = run_eager(g, inputs);
  for (size_t k = 0; k < g.outputs.size(); ++k)
    EXPECT_TRUE(testing::close(env.at(g.outputs[k]).tensor, want[k], 1e-4, 1e-4)) << g.name_of(g.outputs[k]);
}

TEST(Partition, ElementwiseChainIsOneGroup) {
  Model m = model("  x: {shape: [4, 8]}\n",
                  "  - {id: a, op: neg, args: [x]}\n"
                  "  - {id: b, op: exp, args: [a]}\n"
                  "  - {id: c, op: add, args: [b, 1.5]}\n"
                  "  - {id: d, op: mul, args: [c, x]}\n"
                  "  - {id: e, op: tanh, args: [d]}\n"
                  "  - {id: f, op: relu, args: [e]}\n"
                  "  - {id: g, op: sub, args: [f, a]}\n"
                  "  - {id: h, op: sigmoid, args: [g]}\n",
                  "[h]");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].kind, FusionGroup::Kind::Pointwise);
  EXPECT_EQ(member_names(m.graph, plan.groups[0]), (Names{"a", "b", "c", "d", "e", "f", "g", "h"}));
  EXPECT_EQ(value_names(m.graph, plan.groups[0].inputs), Names{"x"});
  EXPECT_EQ(value_names(m.graph, plan.groups[0].outputs), Names{"h"});
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(plan.steps[0].kind, Step::Kind::Kernel);
}

TEST(Partition, FuseDisabledGivesOneKernelPerOp) {
  Model m = model("  x: {shape: [4]}\n",
                  "  - {id: a, op: neg, args: [x]}\n"
                  "  - {id: b, op: sum, args: [a]}\n"
                  "  - {id: c, op: exp, args: [b]}\n",
                  "[c]");
  PartitionOptions options;
  options.fuse = false;
  PartitionPlan plan = partition_block(m.graph, m.graph.body, options);
  ASSERT_EQ(plan.groups.size(), 3u);
  EXPECT_EQ(plan.groups[1].kind, FusionGroup::Kind::Reduction);
  EXPECT_EQ(value_names(m.graph, plan.groups[1].outputs), Names{"b"});
  expect_valid_schedule(m.graph, plan);
}

TEST(Partition, MaxGroupNodesSplitsLongChains) {
  std::string graph;
  std::string prev = "x";
  for (int i = 0; i < 10; ++i) {
    graph += "  - {id: v" + std::to_string(i) + ", op: neg, args: [" + prev + "]}\n";
    prev = "v" + std::to_string(i);
  }
  Model m = model("  x: {shape: [4]}\n", graph, "[v9]");
  PartitionOptions options;
  options.max_group_nodes = 4;
  PartitionPlan plan = partition_block(m.graph, m.graph.body, options);
  ASSERT_EQ(plan.groups.size(), 3u);
  EXPECT_EQ(plan.groups[0].nodes.size(), 4u);
  EXPECT_EQ(value_names(m.graph, plan.groups[1].inputs), Names{"v3"});
  expect_valid_schedule(m.graph, plan);
}

TEST(Partition, DecomposedSoftmaxIsOneReductionKernel) {
  Model m = model("  x: {shape: [B, 16]}\n",
                  "  - {id: m, op: amax, args: [x], dim: -1, keepdim: true}\n"
                  "  - {id: s, op: sub, args: [x, m]}\n"
                  "  - {id: e, op: exp, args: [s]}\n"
                  "  - {id: t, op: sum, args: [e], dim: -1, keepdim: true}\n"
                  "  - {id: y, op: div, args: [e, t]}\n",
                  "[y]", "dims: {B: [1, 8]}\n");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].kind, FusionGroup::Kind::Reduction);
  EXPECT_EQ(member_names(m.graph, plan.groups[0]), (Names{"m", "s", "e", "t", "y"}));
  EXPECT_EQ(value_names(m.graph, plan.groups[0].outputs), Names{"y"});
}

TEST(Partition, DecomposedLogSoftmaxIsOneReductionKernel) {
  Model m = model("  x: {shape: [4, 16]}\n",
                  "  - {id: m, op: amax, args: [x], dim: 1, keepdim: true}\n"
                  "  - {id: s, op: sub, args: [x, m]}\n"
                  "  - {id: e, op: exp, args: [s]}\n"
                  "  - {id: t, op: sum, args: [e], dim: 1, keepdim: true}\n"
                  "  - {id: l, op: log, args: [t]}\n"
                  "  - {id: y, op: sub, args: [s, l]}\n",
                  "[y]");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].nodes.size(), 6u);
}

TEST(Partition, DecomposedLayerNormIsOneReductionKernel) {
  Model m = model("  x: {shape: [B, 8]}\n  w: {shape: [8]}\n  b: {shape: [8]}\n",
                  "  - {id: s1, op: sum, args: [x], dim: -1, keepdim: true}\n"
                  "  - {id: mu, op: div, args: [s1, 8]}\n"
                  "  - {id: d, op: sub, args: [x, mu]}\n"
                  "  - {id: sq, op: mul, args: [d, d]}\n"
                  "  - {id: s2, op: sum, args: [sq], dim: -1, keepdim: true}\n"
                  "  - {id: var, op: div, args: [s2, 8]}\n"
                  "  - {id: ve, op: add, args: [var, 1.0e-5]}\n"
                  "  - {id: r, op: rsqrt, args: [ve]}\n"
                  "  - {id: n, op: mul, args: [d, r]}\n"
                  "  - {id: nw, op: mul, args: [n, w]}\n"
                  "  - {id: y, op: add, args: [nw, b]}\n",
                  "[y]", "dims: {B: [1, 8]}\n");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].kind, FusionGroup::Kind::Reduction);
  EXPECT_EQ(plan.groups[0].nodes.size(), 11u);
  EXPECT_EQ(value_names(m.graph, plan.groups[0].inputs), (Names{"x", "w", "b"}));
}

TEST(Partition, ReductionsSharingAnInputFuseAsSiblings) {
  Model m = model("  x: {shape: [4, 8]}\n",
                  "  - {id: s, op: sum, args: [x], dim: 1}\n"
                  "  - {id: q, op: mul, args: [x, x]}\n"
                  "  - {id: t, op: sum, args: [q], dim: 1}\n",
                  "[s, t]");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(value_names(m.graph, plan.groups[0].outputs), (Names{"s", "t"}));
}

TEST(Partition, ReductionsOverDifferentDimsSplit) {
  Model m = model("  x: {shape: [4, 8]}\n",
                  "  - {id: s, op: sum, args: [x], dim: 1}\n"
                  "  - {id: t, op: sum, args: [x], dim: 0}\n",
                  "[s, t]");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  EXPECT_EQ(plan.groups.size(), 2u);
}

TEST(Partition, PerRowResultWithoutKeepdimFusesOnlyWhenReducedDimsLead) {
  // sum over dim 0 gives [8], which broadcasts back along dim 0: one kernel.
  Model lead = model("  x: {shape: [4, 8]}\n",
                     "  - {id: s, op: sum, args: [x], dim: 0}\n"
                     "  - {id: y, op: sub, args: [x, s]}\n",
                     "[y]");
  EXPECT_EQ(partition_block(lead.graph, lead.graph.body).groups.size(), 1u);
  // sum over dim 1 of a square tensor gives [4], which broadcasts along dim 0, not dim 1: the
  // subtraction reads s per column and cannot use the per-row accumulator.
  Model trail = model("  x: {shape: [4, 4]}\n",
                      "  - {id: s, op: sum, args: [x], dim: 1}\n"
                      "  - {id: y, op: sub, args: [x, s]}\n",
                      "[y]");
  PartitionPlan plan = partition_block(trail.graph, trail.graph.body);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(member_names(trail.graph, plan.groups[1]), Names{"y"});
}

TEST(Partition, ReducedShapeEpilogueJoins) {
  Model m = model("  x: {shape: [4, 8]}\n  b: {shape: [4]}\n",
                  "  - {id: s, op: sum, args: [x], dim: 1}\n"
                  "  - {id: t, op: add, args: [s, b]}\n"
                  "  - {id: u, op: sqrt, args: [t]}\n",
                  "[u]");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(value_names(m.graph, plan.groups[0].inputs), (Names{"x", "b"}));
}

TEST(Partition, MatmulSplitsGroups) {
  Model m = model("  x: {shape: [4, 8]}\n  w: {shape: [8, 8]}\n",
                  "  - {id: a, op: relu, args: [x]}\n"
                  "  - {id: h, op: matmul, args: [a, w]}\n"
                  "  - {id: y, op: tanh, args: [h]}\n",
                  "[y]");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  ASSERT_EQ(plan.groups.size(), 2u);
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[0].kind, Step::Kind::Kernel);
  EXPECT_EQ(plan.steps[1].kind, Step::Kind::Extern);
  EXPECT_EQ(plan.steps[2].kind, Step::Kind::Kernel);
  EXPECT_EQ(value_names(m.graph, plan.groups[0].outputs), Names{"a"});
}

TEST(Partition, BroadcastingInputsStayInTheGroup) {
  Model m = model("  x: {shape: [B, 8]}\n  b: {shape: [8]}\n  s: {shape: []}\n",
                  "  - {id: a, op: add, args: [x, b]}\n"
                  "  - {id: c, op: mul, args: [a, s]}\n",
                  "[c]", "dims: {B: [1, 8]}\n");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(value_names(m.graph, plan.groups[0].inputs), (Names{"x", "b", "s"}));
}

TEST(Partition, ShapeChangingElementwiseOpsSplit) {
  Model m = model("  x: {shape: [4, 1]}\n  y: {shape: [1, 5]}\n",
                  "  - {id: e, op: exp, args: [x]}\n"
                  "  - {id: a, op: add, args: [e, y]}\n"
                  "  - {id: r, op: relu, args: [a]}\n",
                  "[r]");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(member_names(m.graph, plan.groups[0]), Names{"e"});
  EXPECT_EQ(member_names(m.graph, plan.groups[1]), (Names{"a", "r"}));
}

TEST(Partition, CastsOfSmallerInputsJoinAsPrologues) {
  // w's float32 copy is recomputed per element of [4, 8] inside the kernel; when the copy is also
  // needed outside, it is a kernel of its own.
  std::string inputs = "  x: {shape: [4, 8], dtype: float16}\n  w: {shape: [8], dtype: float16}\n";
  std::string graph = "  - {id: w32, op: to, args: [w], dtype: float32}\n"
                      "  - {id: x32, op: to, args: [x], dtype: float32}\n"
                      "  - {id: y, op: mul, args: [x32, w32]}\n"
                      "  - {id: s, op: sum, args: [y], dim: 1}\n";
  Model inside = model(inputs, graph, "[s]");
  PartitionPlan plan = partition_block(inside.graph, inside.graph.body);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(member_names(inside.graph, plan.groups[0]), (Names{"w32", "x32", "y", "s"}));
  expect_plan_matches_eager(inside, plan);
  Model pointwise = model(inputs, graph.substr(0, graph.find("  - {id: s")), "[y]");
  plan = partition_block(pointwise.graph, pointwise.graph.body);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].kind, FusionGroup::Kind::Pointwise);
  expect_plan_matches_eager(pointwise, plan);
  Model shared = model(inputs, graph, "[s, w32]");
  plan = partition_block(shared.graph, shared.graph.body);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(member_names(shared.graph, plan.groups[0]), Names{"w32"});
  expect_plan_matches_eager(shared, plan);
}

TEST(Partition, DiamondThroughAnExternHasNoCycle) {
  // d reads a directly and through the matmul: fusing d with a would need the matmul inside.
  Model m = model("  x: {shape: [4, 4]}\n  w: {shape: [4, 4]}\n",
                  "  - {id: a, op: relu, args: [x]}\n"
                  "  - {id: h, op: matmul, args: [a, w]}\n"
                  "  - {id: d, op: add, args: [a, h]}\n",
                  "[d]");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(member_names(m.graph, plan.groups[0]), Names{"a"});
  EXPECT_EQ(member_names(m.graph, plan.groups[1]), Names{"d"});
  expect_valid_schedule(m.graph, plan);
}

TEST(Partition, DiamondOfElementwiseOpsIsOneGroup) {
  Model m = model("  x: {shape: [4]}\n",
                  "  - {id: a, op: relu, args: [x]}\n"
                  "  - {id: b, op: exp, args: [a]}\n"
                  "  - {id: c, op: neg, args: [a]}\n"
                  "  - {id: d, op: add, args: [b, c]}\n",
                  "[d, a]");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(value_names(m.graph, plan.groups[0].outputs), (Names{"a", "d"}));
}

TEST(Partition, IndependentGroupsMergeAtTheirJoin) {
  Model m = model("  x: {shape: [4]}\n  y: {shape: [4]}\n",
                  "  - {id: a, op: exp, args: [x]}\n"
                  "  - {id: b, op: sin, args: [y]}\n"
                  "  - {id: c, op: add, args: [a, b]}\n",
                  "[c]");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_EQ(plan.groups[0].nodes.size(), 3u);
}

TEST(Partition, NothingMovesAcrossEagerSteps) {
  Model m = model("  x: {shape: [4]}\n",
                  "  - {id: a, op: exp, args: [x]}\n"
                  "  - {op: print, args: [a], message: here}\n"
                  "  - {id: b, op: neg, args: [a]}\n",
                  "[b]");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  ASSERT_EQ(plan.groups.size(), 2u);
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[1].kind, Step::Kind::Eager);
  EXPECT_EQ(plan.steps[1].reason, "print has a side effect");
}

TEST(Partition, LibraryAndEagerStepsCarryReasons) {
  Model m = model("  x: {shape: [4, 6]}\n",
                  "  - {id: r, op: reshape, args: [x], shape: [6, 4]}\n"
                  "  - {id: n, op: nonzero, args: [r]}\n"
                  "  - {id: c, op: custom, args: [x], name: scaled_tanh}\n"
                  "  - {id: d, op: custom, args: [x], name: scaled_tanh, meta: same_as_input}\n",
                  "[n, c, d]");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  EXPECT_TRUE(plan.groups.empty());
  ASSERT_EQ(plan.steps.size(), 4u);
  EXPECT_EQ(plan.steps[0].kind, Step::Kind::Library);
  EXPECT_EQ(plan.steps[1].kind, Step::Kind::Eager);
  EXPECT_EQ(plan.steps[1].reason, "output size depends on the data");
  EXPECT_EQ(plan.steps[2].kind, Step::Kind::Eager);
  EXPECT_EQ(plan.steps[3].kind, Step::Kind::Library);
}

TEST(Partition, PrintsThePlan) {
  Model m = model("  x: {shape: [4, 8]}\n  w: {shape: [8, 8]}\n",
                  "  - {id: a, op: relu, args: [x]}\n"
                  "  - {id: h, op: matmul, args: [a, w]}\n"
                  "  - {id: r, op: reshape, args: [h], shape: [32]}\n"
                  "  - {id: s, op: sum, args: [r]}\n"
                  "  - {op: print, args: [s]}\n",
                  "[s]");
  PartitionPlan plan = partition_block(m.graph, m.graph.body);
  EXPECT_EQ(print_partition(m.graph, m.graph.body, plan),
            "kernel 0 pointwise [a]  in: x  out: a\n"
            "extern h: float32[4, 8] = matmul(a, w)\n"
            "library r: float32[32] = reshape(h, shape=[32])  # view op\n"
            "kernel 1 reduction [s]  in: r  out: s\n"
            "eager print(s)  # print has a side effect\n");
}

// Graphs drawn from elementwise ops, reductions, matmuls and views over a few shapes: whatever
// the partitioner fuses, the steps must form a valid schedule that computes what eager does.
TEST(Partition, GeneratedGraphsGiveValidSchedules) {
  for (uint32_t seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    std::vector<std::string> square = {"x", "y"}, row = {"r"};
    std::string graph;
    for (int i = 0; i < 14; ++i) {
      std::string id = "v" + std::to_string(i);
      const std::string& a = square[pick(square.size())];
      const std::string& b = square[pick(square.size())];
      switch (pick(7)) {
        case 0: graph += "  - {id: " + id + ", op: add, args: [" + a + ", " + b + "]}\n"; square.push_back(id); break;
        case 1: graph += "  - {id: " + id + ", op: exp, args: [" + a + "]}\n"; square.push_back(id); break;
        case 2: graph += "  - {id: " + id + ", op: matmul, args: [" + a + ", " + b + "]}\n"; square.push_back(id); break;
        case 3:
          graph += "  - {id: " + id + ", op: sum, args: [" + a + "], dim: " + std::to_string(pick(2)) + ", keepdim: true}\n";
          row.push_back(id);
          break;
        case 4: {
          const std::string& r = row[pick(row.size())];
          graph += "  - {id: " + id + ", op: mul, args: [" + a + ", " + r + "]}\n";
          square.push_back(id);
          break;
        }
        case 5: graph += "  - {id: " + id + ", op: transpose, args: [" + a + "], dim0: 0, dim1: 1}\n"; square.push_back(id); break;
        default: graph += "  - {id: " + id + ", op: amax, args: [" + a + "], dim: 1, keepdim: true}\n"; row.push_back(id); break;
      }
    }
    Model m = model("  x: {shape: [4, 4]}\n  y: {shape: [4, 4]}\n  r: {shape: [4, 1]}\n", graph,
                    "[" + square.back() + ", " + row.back() + "]");
    for (bool fuse : {true, false}) {
      PartitionOptions options;
      options.fuse = fuse;
      PartitionPlan plan = partition_block(m.graph, m.graph.body, options);
      SCOPED_TRACE("seed " + std::to_string(seed) + "\n" + print_partition(m.graph, m.graph.body, plan));
      expect_valid_schedule(m.graph, plan);
      expect_plan_matches_eager(m, plan);
    }
  }
}

}  // namespace
}  // namespace gbc
