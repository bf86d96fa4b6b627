#include "compiler/passes/pass_manager.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "compiler/ir/printer.h"
#include "compiler/ir/verify.h"
#include "compiler/passes/constant_fold.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/dce.h"
#include "compiler/passes/decompose.h"
#include "compiler/passes/fold_conv_bn.h"
#include "compiler/passes/functionalize.h"
#include "compiler/passes/pipeline_config.h"
#include "compiler/support/config_dir.h"
#include "compiler/support/log.h"
#include "compiler/support/trace.h"

namespace gbc {
namespace {

// The partitioner's switch, and the runtime's computing of param-only steps once (it marks steps
// of the partition); both act after the graph passes, per compiled region.
constexpr const char* kFusePass = "fuse";
constexpr const char* kFoldParamsPass = "fold_params";

bool pass_times_enabled() {
  const char* v = std::getenv("GBCHECK_PASS_TIMES");
  return v && std::strcmp(v, "1") == 0;
}

// The passes' names, then the switches of the steps that run per region after them.
std::vector<std::string> with_region_switches(const std::vector<PassInfo>& passes) {
  std::vector<std::string> names;
  for (const auto& p : passes) names.push_back(p.name);
  names.push_back(kFusePass);
  names.push_back(kFoldParamsPass);
  return names;
}

std::string ir_text(const Graph& g) { return print_graph(g, PrintOptions{/*locations=*/false}); }

}  // namespace

const std::vector<PassInfo>& graph_pass_registry() {
  static const std::vector<PassInfo> registry = {
      {"functionalize", "in-place add_/mul_ on values nobody else observes become out-of-place ops", &functionalize},
      {"fold_conv_bn", "an eval-mode batch_norm after a conv2d folds into the conv's weight and bias", &fold_conv_bn},
      {"decompose", "softmax, layer_norm, var, gelu, ... become primitives the fusion partitioner fuses", &decompose},
      {"constant_fold", "elementwise ops on constants are evaluated; x*1, x+0 and similar identities go away",
       &constant_fold},
      {"cse", "identical pure nodes are computed once", &cse},
      {"dce", "nodes whose results are unused and that have no side effects are removed", &dce},
  };
  return registry;
}

const std::vector<PassInfo>& graph_pipeline() {
  static const std::vector<PassInfo> pipeline = [] {
    std::vector<std::string> known;
    for (const auto& p : graph_pass_registry()) known.push_back(p.name);
    std::vector<PassInfo> passes;
    for (const std::string& name : load_pipeline_config(config_file("pipeline.yaml"), known))
      for (const auto& p : graph_pass_registry())
        if (p.name == name) passes.push_back(p);
    return passes;
  }();
  return pipeline;
}

std::vector<std::string> all_pass_names() { return with_region_switches(graph_pipeline()); }

std::vector<std::string> known_pass_names() { return with_region_switches(graph_pass_registry()); }

bool is_known_pass(const std::string& name) {
  std::vector<std::string> names = known_pass_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

Graph run_graph_pipeline(const Graph& graph, const PassRunOptions& options, std::vector<PassRecord>* records) {
  Graph g = graph;
  bool log_times = pass_times_enabled();
  for (const auto& pass : graph_pipeline()) {
    PassRecord rec;
    rec.name = pass.name;
    rec.nodes_before = g.node_count();
    if (options.disabled.count(pass.name)) {
      rec.nodes_after = rec.nodes_before;
      GBC_LOG_CHANNEL(passes) << "skipping " << pass.name << " (disabled)";
      trace::emit("pass", {{"graph", graph.name}, {"name", pass.name}, {"disabled", true}, {"nodes_before", rec.nodes_before}});
      if (records) records->push_back(rec);
      continue;
    }
    std::string before = ir_text(g);
    auto start = std::chrono::steady_clock::now();
    Graph next = pass.run(g);
    rec.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (options.verify) verify_graph(next, pass.name);
    rec.ran = true;
    rec.nodes_after = next.node_count();
    std::string after = ir_text(next);
    rec.changed = after != before;
    if (rec.changed) {
      GBC_LOG_CHANNEL(passes) << "after " << pass.name << ":\n" << print_graph(next);
    }
    if (log_times) {
      std::ostringstream ms;
      ms.precision(3);
      ms << std::fixed << rec.ms;
      GBC_LOG_CHANNEL(passes) << "pass " << pass.name << ": " << ms.str() << " ms, nodes " << rec.nodes_before << " -> "
                              << rec.nodes_after;
    }
    if (trace::enabled()) {
      nlohmann::json fields = {{"graph", graph.name},        {"name", pass.name},          {"ms", rec.ms},
                               {"nodes_before", rec.nodes_before}, {"nodes_after", rec.nodes_after}, {"changed", rec.changed}};
      if (rec.changed) fields["before"] = print_graph(g), fields["after"] = print_graph(next);
      trace::emit("pass", std::move(fields));
    }
    g = std::move(next);
    if (records) records->push_back(rec);
  }
  return g;
}

}  // namespace gbc
