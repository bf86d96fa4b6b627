// The graph-level pipeline as data (name, summary, function) and its runner: verifies the IR after
// every pass, logs the IR after each pass that changed it (`--log passes`), and times passes when
// GBCHECK_PASS_TIMES=1. Test: tests/passes/pass_manager_test.cpp.
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

/// functionalize, decompose, constant_fold, cse, dce, in that order.
const std::vector<PassInfo>& graph_pipeline();

/// The pipeline's names plus "fuse" (the fusion partitioner's switch, see partition.h) and
/// "fold_params" (computing param-only steps once, compiler/runtime/param_steps.h): every name a
/// user may disable.
std::vector<std::string> all_pass_names();
bool is_known_pass(const std::string& name);

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
