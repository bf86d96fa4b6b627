// Runs the differential check: for each case, the reference (eager, or the backend --reference
// names; run twice: it must agree with itself), then every compiled backend on the same inputs (fresh copies, the same RNG seed), each
// output judged by the oracles (case_run.h). Backends persist across cases, so compile caches,
// guards and recompiles behave as in a real deployment. The first failing case of each backend is
// shrunk on fresh backends, and the report names the shrunk case's --shrink path. The user's own
// cases (--inputs) follow the generated ones; --save-inputs/--save-outputs keep what each case used.
// Test: tests/runner/check_runner_test.cpp.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backends/backend.h"
#include "harness/inputs/case_recipe.h"
#include "harness/model/model.h"
#include "harness/runner/check_report.h"

namespace gbc {

struct GivenCase;  // harness/inputs/user_inputs.h: its tensors are the only LibTorch type here

/// Its special members are defined in check_runner.cpp, where GivenCase is complete, so that the
/// command-line files that fill it compile without LibTorch's headers (cmake/torch_pch.cmake).
struct RunOptions {
  RunOptions();
  RunOptions(const RunOptions&);
  RunOptions(RunOptions&&) noexcept;
  RunOptions& operator=(const RunOptions&);
  RunOptions& operator=(RunOptions&&) noexcept;
  ~RunOptions();

  std::vector<std::string> backends;  // resolved: command line over check.backends
  /// What the backends are compared with (--reference): "eager", or any backend's name (gbc vs
  /// ts-freeze, nnc vs gbc, ...).
  std::string reference = "eager";
  int cases = 20;
  std::optional<int> only_case;       // --case K: run just that case
  ShrinkPath shrink_path;             // --shrink PATH (with --case): that shrink of the case
  bool fullgraph = false;             // a graph break fails the check
  BackendOptions backend_options;
  int max_failures_kept = 5;
  /// Candidates tried when shrinking a failing case (0: no shrinking). Only each backend's first
  /// failing case is shrunk: shrinking reruns the case many times.
  int max_shrink_tries = 200;
  /// The user's own cases (--inputs), run after the generated ones as cases `cases` and up; with
  /// --case K, K past the generated ones names one of them. They are not shrunk.
  std::vector<GivenCase> given_cases;
  std::vector<std::string> given_input_paths;  // --inputs as given (for replay commands)
  /// --save-inputs, --save-outputs: where each case's inputs, and eager's outputs (each backend's in
  /// a subfolder named after it), are kept (harness/inputs/saved_cases.h); "" keeps nothing.
  std::string save_inputs_dir;
  std::string save_outputs_dir;
  /// Paths this run can name besides backend_registry()'s (tests plant faulty backends this way).
  std::vector<BackendInfo> extra_backends;
  /// Progress: (cases done, cases total). Called after each case.
  std::function<void(int, int)> on_progress;
  /// Called with each backend after its last case, while it lives (the trace records what it built).
  std::function<void(const std::string&, const Backend&)> on_backend_done;
};

/// Fills RunOptions from the model's check: section (before command-line overrides).
RunOptions run_options_from_model(const Model& model);

/// The report's fields known before any case runs (model, device, seed, cases, oracles): what a
/// crash report can say about a check that never finished.
CheckReport start_report(const Model& model, const RunOptions& options);

/// Runs the check. Invalid backend names are the caller's to validate (validate_backends). Throws
/// ModelError for an invalid oracle selection or a --shrink path the case does not have.
CheckReport run_check(const Model& model, const RunOptions& options);

/// Problems with backend names, as diagnostics located at check.backends (or the command line).
Diagnostics validate_backends(const Model& model, const std::vector<std::string>& names, bool from_command_line);
/// Problems with a --reference name (located on the command line).
Diagnostics validate_reference(const std::string& name);

/// Problems with the oracle selection (check.oracle, check.error_stat), located at their keys.
/// run_check throws them as a ModelError; callers that report diagnostics first can check here.
Diagnostics validate_check_options(const Model& model);

}  // namespace gbc
