// `gbcheck fuzz`: a campaign over generated graphs. Each of --jobs worker processes walks its part
// of the shard's seed space (shard.h): generate the graph of the position's seed, check it in the
// sandbox (graph_check.h), record the case and its hits in the store in one transaction
// (harness/store/fuzz_store.h), and reduce each signature that is new into a repro folder
// (repro_folder.h) before going on. The parent shows progress from the store and stops the
// workers when the seed space or the time runs out, or on SIGINT/SIGTERM (after the case in
// flight). --resume continues the store's unfinished run with its stored settings: the cases it
// recorded are skipped, its clock continues, and reductions a kill interrupted are redone.
// Layout of the output folder and the store's schema: docs/fuzzing.md.
// Tested in tests/fuzz/fuzz_campaign_test.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/fuzz/campaign/graph_check.h"
#include "harness/fuzz/campaign/shard.h"
#include "harness/fuzz/generator_config.h"
#include "harness/store/fuzz_store.h"

namespace gbc {

struct FuzzOptions {
  std::string out_dir;
  uint64_t seed = 0;
  std::optional<int64_t> cases;   // size of the seed space (all shards together)
  std::optional<double> time_s;   // wall time of this run (resumed time counts)
  int jobs = 1;
  Shard shard;
  bool resume = false;
  /// Graph shapes: nodes, breaks, check.cases per graph. backends and seed are set per graph.
  /// Has no defaults: start from load_fuzz_config() (fuzz_config.h), as `gbcheck fuzz` does.
  GeneratorConfig generator;
  /// The --fuzz-config file the generator settings came from, if any: replay lines name it.
  std::string fuzz_config_path;
  GraphCheckOptions check;  // backends, kernel cache, --inject-fault, sandbox limits
  /// The --backends-config file (absolute) whose adapters the backends may name: stored with the
  /// run, registered again by --resume, and repeated in replay lines.
  std::string backends_config;
  int reduce_checks = 300;  // per new signature; 0: no reduction
  /// Graphs whose gbc CPU kernels a worker builds together before checking them, in one compiler
  /// run (kernel_prefetch.h); 0 or 1: each graph's check compiles its own modules.
  int kernel_batch = 8;
  /// Progress output: a live line when `tty`, else a line a minute; nothing when null.
  std::ostream* progress = nullptr;
  bool tty = false;
};

struct FuzzResult {
  RunInfo run;
  FuzzStore::Counts counts;     // this run's
  int64_t new_signatures = 0;   // the store's signatures with status new
  bool interrupted = false;     // stopped by a signal before the seed space or time ran out
  std::string error;            // a worker died outside the sandbox (a gbcheck bug): what happened
};

/// Validates options (std::invalid_argument with a message for the user) and runs the campaign.
/// Throws StoreError when the store cannot be used, std::invalid_argument for --resume without
/// an unfinished run.
FuzzResult run_fuzz(FuzzOptions options);

/// The gbcheck-gen options that regenerate a campaign's graphs (for replay lines).
std::string generator_args(const FuzzOptions& options);

}  // namespace gbc
