// The graph-level pipeline and its runner: the passes are code (a registry of name, summary,
// function), their order is data (configs/pipeline.yaml, read by pipeline_config.h). The runner
// verifies the IR after every pass, logs the IR after each pass that changed it (`--log passes`),
// and times passes when GBCHECK_PASS_TIMES=1. Test: tests/passes/pass_manager_test.cpp.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace gbc {

struct PassInfo {
  std::string name;
  std::string summary;  // one line, for --help and docs
  Graph (*run)(const Graph&);
};

/// Every graph pass a pipeline may run: functionalize, fold_conv_bn, decompose, constant_fold, cse, dce.
const std::vector<PassInfo>& graph_pass_registry();

/// The passes configs/pipeline.yaml lists, in its order; read once. Throws ConfigNotFound when the
/// file is missing and ConfigError when it is invalid (load it early, where those are reported:
/// the command line does).
const std::vector<PassInfo>& graph_pipeline();

/// The pipeline's names plus "fuse" (the fusion partitioner's switch, see partition.h) and
/// "fold_params" (computing param-only steps once, compiler/runtime/param_steps.h): every name
/// whose disabling changes what gbc does.
std::vector<std::string> all_pass_names();
/// A name --disable-pass takes: a registered graph pass (in the pipeline or not), fuse, fold_params.
bool is_known_pass(const std::string& name);
/// Every name is_known_pass accepts, registry order first (for messages).
std::vector<std::string> known_pass_names();

struct PassRunOptions {
  std::set<std::string> disabled;  // names are the caller's to validate (is_known_pass)
  bool verify = true;              // verify_graph after every pass
};

struct PassRecord {
  std::string name;
  bool ran = false;      // false: disabled
  bool changed = false;  // the IR text (without locations) differs
  double ms = 0.0;       // wall time of the pass itself
  size_t nodes_before = 0, nodes_after = 0;
};

/// Runs the pipeline on a copy of `graph`, skipping disabled passes; one record per pipeline pass.
Graph run_graph_pipeline(const Graph& graph, const PassRunOptions& options, std::vector<PassRecord>* records = nullptr);

}  // namespace gbc
