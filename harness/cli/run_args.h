// Options shared by every command that loads a model and runs backends (check, explain, bench,
// reduce, bisect, repro): which backends, cases, seed, the user's inputs, device, compiler
// switches, logging.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

#include "harness/cli/tolerance_args.h"
#include "harness/model/model.h"
#include "harness/runner/check_runner.h"

namespace gbc {

/// Which of the shared options a command has: help lists only options that do something there.
struct RunArgsScope {
  bool model_required = true;
  bool one_backend = false;  // reduce, bisect, repro: one failing backend
  bool cases = true;         // --cases (bench times one case)
  bool shrink = true;        // --shrink (reduce starts from a case as drawn)
  bool fullgraph = true;
  bool tolerances = true;    // --rtol, --atol, --error-stat (not bench, explain: nothing is judged)
  bool reference = true;     // --reference (not bench, explain, bisect: nothing is compared)
  bool given_inputs = false; // --inputs (check, reduce, repro, bisect: every command that runs a case)
  bool save_cases = false;   // --save-inputs, --save-outputs (check)
  bool several_models = false;  // check: the positional takes model files and folders (model_paths)
};

/// Starts the trace: into dir when given, else into $GBCHECK_TRACE_DIR when set. Returns false after
/// printing why when dir cannot be written.
bool start_trace(const std::string& dir);

struct RunArgs {
  std::string model_path;
  std::vector<std::string> model_paths;  // with RunArgsScope::several_models, as given
  std::vector<std::string> backends;
  std::string reference;  // --reference: what the backends are compared with ("": eager)
  std::optional<int> cases;
  std::optional<int64_t> seed;
  std::optional<int> only_case;
  std::string shrink_path;  // --shrink PATH: with --case, that case's shrink (as a report prints it)
  std::string device;
  bool fullgraph = false;
  std::vector<std::string> disabled_passes;
  std::string cache_dir;
  bool no_cache = false;
  std::string log_channels;
  bool verbose = false;
  std::string backends_config;  // --backends-config: adapters on top of configs/backends.yaml
  std::string inject_fault;  // testing aid (harness/cli/inject_fault.h); "" = off
  ToleranceArgs tolerances;
  std::vector<std::string> import_inputs;  // --input, for a TorchScript model (docs/importing.md)
  std::vector<std::string> import_dims;    // --dim
  std::vector<std::string> given_inputs;   // --inputs: the user's own cases (harness/inputs/user_inputs.h)
  std::string save_inputs;                 // --save-inputs DIR
  std::string save_outputs;                // --save-outputs DIR
  std::string trace_dir;                   // --trace DIR (compiler/support/trace.h)

  /// Declares the options on a subcommand.
  void add_to(CLI::App& app, const RunArgsScope& scope = {});
  /// Sets up logging and the trace (--trace, $GBCHECK_TRACE_DIR); returns false (after printing
  /// why) when the options are unusable.
  bool apply_logging() const;
  /// Loads the model (ModelError on invalid input), applying --seed and the tolerance options, and
  /// traces it (`model_loaded`). A
  /// TorchScript file (.pt) is imported in memory with --input and --dim; an import that is not
  /// faithful is InternalError.
  Model load() const;
  /// RunOptions from the model, overridden by the command line; validates backend names and the
  /// device; reads --inputs (ModelError for a case that does not fit the model). Returns the exit
  /// code to stop with, or nullopt to go on.
  std::optional<int> resolve(const Model& model, RunOptions& out) const;
};

}  // namespace gbc
