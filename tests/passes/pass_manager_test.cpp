// The pipeline as data and its runner: order and names (configs/pipeline.yaml's order over the
// registry's passes), disabling passes by name, unknown names, records of what ran and changed,
// and the IR and timings logged on the passes channel.
#include "compiler/passes/pass_manager.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "compiler/passes/pipeline_config.h"
#include "compiler/support/config_dir.h"
#include "compiler/support/log.h"
#include "tests/passes/pass_test_util.h"

namespace gbc {
namespace {

using testing::graph_of;
using testing::ir;

// Each pass of the pipeline has something to do here: a private in-place op, a softmax, a
// multiplication by a tensor of ones, exp(x) twice (once functionalize frees a), and the ones
// left dead.
const char* kModel = R"(inputs: {x: {shape: [2, 3], dtype: float32}}
graph:
  - {id: a, op: exp, args: [x]}
  - {op: mul_, args: [a, 2.0]}
  - {id: s, op: softmax, args: [a], dim: -1}
  - {id: one, op: full, shape: [3], value: 1.0}
  - {id: t, op: mul, args: [s, one]}
  - {id: e, op: exp, args: [x]}
  - {id: y, op: add, args: [t, e]}
outputs: [y]
)";

std::vector<std::string> pipeline_names() {
  std::vector<std::string> names;
  for (const auto& p : graph_pipeline()) names.push_back(p.name);
  return names;
}

TEST(PassManager, PipelineOrderAndNames) {
  EXPECT_EQ(pipeline_names(),
            (std::vector<std::string>{"functionalize", "fold_conv_bn", "decompose", "constant_fold", "cse", "dce"}));
  for (const auto& p : graph_pipeline()) {
    EXPECT_FALSE(p.summary.empty()) << p.name;
    EXPECT_NE(p.run, nullptr) << p.name;
  }
  EXPECT_EQ(all_pass_names(),
            (std::vector<std::string>{"functionalize", "fold_conv_bn", "decompose", "constant_fold", "cse", "dce", "fuse", "fold_params"}));
}

// configs/pipeline.yaml gives the order; the passes themselves are the registry's.
TEST(PassManager, PipelineOrderIsData) {
  std::vector<std::string> registry;
  for (const auto& p : graph_pass_registry()) registry.push_back(p.name);
  EXPECT_EQ(read_pipeline_config("graph_passes: [dce, decompose, cse]\n", "p.yaml", registry),
            (std::vector<std::string>{"dce", "decompose", "cse"}));
  EXPECT_TRUE(read_pipeline_config("graph_passes: []\n", "p.yaml", registry).empty());
  EXPECT_EQ(load_pipeline_config(config_file("pipeline.yaml"), registry), pipeline_names());
  EXPECT_THROW(read_pipeline_config("graph_passes: [dce, upcast_fp64]\n", "p.yaml", registry), ConfigError);
  EXPECT_EQ(known_pass_names(), all_pass_names());  // the shipped pipeline runs every graph pass
}

TEST(PassManager, KnowsEveryPassNameAndNothingElse) {
  for (const auto& name : all_pass_names()) EXPECT_TRUE(is_known_pass(name)) << name;
  for (const char* unknown : {"", "cse2", "CSE", "decomp", "upcast_fp64", "partition"})
    EXPECT_FALSE(is_known_pass(unknown)) << unknown;
}

TEST(PassManager, RunsThePipelineAndRecordsEachPass) {
  Graph g = graph_of(kModel);
  std::vector<PassRecord> records;
  Graph out = run_graph_pipeline(g, PassRunOptions{}, &records);
  EXPECT_EQ(ir(out), R"(graph t(x: float32[2, 3]) {
  a: float32[2, 3] = exp(x)
  a.mut: float32[2, 3] = mul(a, 2.0)
  s.max: float32[2, 1] = amax(a.mut, dim=-1, keepdim=true)
  s.shifted: float32[2, 3] = sub(a.mut, s.max)
  s.exp: float32[2, 3] = exp(s.shifted)
  s.sum: float32[2, 1] = sum(s.exp, dim=-1, keepdim=true)
  s.inv_sum: float32[2, 1] = reciprocal(s.sum)
  s: float32[2, 3] = mul(s.exp, s.inv_sum)
  y: float32[2, 3] = add(s, a)
  return y
}
)");
  ASSERT_EQ(records.size(), 6u);
  std::vector<size_t> after = {7, 7, 12, 11, 10, 9};  // the model has no conv: fold_conv_bn finds nothing
  size_t before = 7;
  for (size_t i = 0; i < records.size(); ++i) {
    SCOPED_TRACE(records[i].name);
    EXPECT_EQ(records[i].name, pipeline_names()[i]);
    EXPECT_TRUE(records[i].ran);
    EXPECT_EQ(records[i].changed, records[i].name != "fold_conv_bn");
    EXPECT_GE(records[i].ms, 0.0);
    EXPECT_EQ(records[i].nodes_before, before);
    EXPECT_EQ(records[i].nodes_after, after[i]);
    before = after[i];
  }
  // A second run finds nothing left to do.
  std::vector<PassRecord> again;
  EXPECT_EQ(ir(run_graph_pipeline(out, PassRunOptions{}, &again)), ir(out));
  for (const auto& r : again) EXPECT_FALSE(r.changed) << r.name;
}

TEST(PassManager, DisablingAPassSkipsIt) {
  Graph g = graph_of(kModel);
  Graph all = run_graph_pipeline(g, PassRunOptions{});
  for (const auto& name : pipeline_names()) {
    SCOPED_TRACE(name);
    PassRunOptions options;
    options.disabled = {name};
    std::vector<PassRecord> records;
    Graph out = run_graph_pipeline(g, options, &records);
    ASSERT_EQ(records.size(), 6u);
    for (const auto& r : records) {
      EXPECT_EQ(r.ran, r.name != name) << r.name;
      if (r.name == name) {
        EXPECT_FALSE(r.changed);
        EXPECT_EQ(r.nodes_after, r.nodes_before);
      }
    }
    if (name != "fold_conv_bn") {
      EXPECT_NE(ir(out), ir(all));  // every other pass matters for this model
    }
  }
  PassRunOptions no_decompose;
  no_decompose.disabled = {"decompose"};
  bool softmax_left = false;
  for_each_node(run_graph_pipeline(g, no_decompose).body, [&](const Node& n) { softmax_left |= n.op == OpId::Softmax; });
  EXPECT_TRUE(softmax_left);
  PassRunOptions everything;
  everything.disabled = {"functionalize", "fold_conv_bn", "decompose", "constant_fold", "cse", "dce"};
  EXPECT_EQ(ir(run_graph_pipeline(g, everything)), ir(g));
}

TEST(PassManager, LogsTheIrAfterPassesThatChangedIt) {
  Graph g = graph_of(R"(inputs: {x: {shape: [4], dtype: float32}}
graph:
  - {id: y, op: gelu, args: [x]}
outputs: [y]
)");
  log::enable_channels("passes");
  ::testing::internal::CaptureStderr();
  run_graph_pipeline(g, PassRunOptions{{"cse"}, true});
  std::string logged = ::testing::internal::GetCapturedStderr();
  log::disable_all_channels();
  const std::string decomposed = "after decompose:\ngraph t(x: float32[4]) {\n  y.scaled: float32[4] = mul(x, 0.70710678118654757)";
  EXPECT_NE(logged.find(decomposed), std::string::npos) << logged;
  EXPECT_NE(logged.find("skipping cse (disabled)"), std::string::npos) << logged;
  for (const char* unchanged : {"after functionalize:", "after constant_fold:", "after dce:"})
    EXPECT_EQ(logged.find(unchanged), std::string::npos) << unchanged << "\n" << logged;
  EXPECT_EQ(logged.find(" ms"), std::string::npos) << logged;
}

TEST(PassManager, LogsPassTimesWhenAsked) {
  Graph g = graph_of(kModel);
  log::enable_channels("passes");
  setenv("GBCHECK_PASS_TIMES", "1", 1);
  ::testing::internal::CaptureStderr();
  run_graph_pipeline(g, PassRunOptions{});
  std::string logged = ::testing::internal::GetCapturedStderr();
  unsetenv("GBCHECK_PASS_TIMES");
  log::disable_all_channels();
  for (const auto& name : pipeline_names())
    EXPECT_NE(logged.find("pass " + name + ": "), std::string::npos) << name << "\n" << logged;
  EXPECT_NE(logged.find("nodes 7 -> 7"), std::string::npos) << logged;
}

}  // namespace
}  // namespace gbc
