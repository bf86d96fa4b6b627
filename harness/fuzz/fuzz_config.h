// configs/fuzz.yaml and the files `--fuzz-config FILE` names: the generator's settings (every
// field of GeneratorConfig) and the campaign's defaults (what `gbcheck fuzz` checks each graph
// with). The defaults file holds every key; an override file names only the keys it changes, on
// top of the defaults. Every problem is reported at its file:line:col (ConfigError, exit code 2).
// Keys and meaning: docs/configs.md. Tested in tests/fuzz/fuzz_config_test.cpp; error messages are
// pinned in corpus/config-errors/fuzz/.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/ir/diagnostics.h"
#include "harness/fuzz/generator_config.h"

namespace gbc {

/// What `gbcheck fuzz` gives each generated graph unless its command line says otherwise
/// (gbcheck-gen takes check.backends and check.cases from the generator section instead).
struct FuzzCampaignConfig {
  std::vector<std::string> backends;  // --backends
  int graph_cases = 0;                // --graph-cases: check.cases of each graph
};

struct FuzzConfig {
  GeneratorConfig generator;
  FuzzCampaignConfig campaign;
  /// Where each key was last set ("generator.max_rank", "generator.op_weights.add",
  /// "campaign.backends"), for messages about values only later stages can judge.
  std::map<std::string, SourceLoc> locs;
  /// locs[key], or an unknown location.
  SourceLoc loc_of(const std::string& key) const;
};

/// configs/fuzz.yaml (read once), then the keys of `override_path` on top when it is not empty.
/// Throws ConfigNotFound when configs/fuzz.yaml is missing, ConfigError when a file is invalid.
FuzzConfig load_fuzz_config(const std::string& override_path = "");
/// load_fuzz_config().generator: what tests and tools start from.
GeneratorConfig default_generator_config();

/// Sets the keys `text` names in `config`; with `complete`, every key must be there (the defaults
/// file). The result must be valid (generator_config_problems): a problem is reported at the key
/// it concerns in this file. Throws ConfigError with every diagnostic.
void read_fuzz_config(const std::string& text, const std::string& path, bool complete, FuzzConfig& config);

/// The whole config as fuzz.yaml text, every key, numbers exact: read_fuzz_config with complete
/// reads it back into the same config (how a fuzz run stores its settings for --resume).
std::string write_fuzz_config(const FuzzConfig& config);

}  // namespace gbc
