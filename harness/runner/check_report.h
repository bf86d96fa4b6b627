// The outcome of checking a model: per backend, the cases run, the failures with everything needed
// to understand and replay them (which oracle failed and why, the least tolerance that would have
// passed, the shrunk case and its replay command), compile events, drift series, and whether
// expectations held. Reports (terminal, JSON) render this; exit codes derive from it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/backends/backend.h"
#include "harness/model/check_config.h"
#include "oracles/drift_oracle.h"
#include "oracles/error_stats.h"
#include "oracles/verdict.h"

namespace gbc {

/// Exit codes scripts can rely on (docs/cli.md).
enum ExitCode : int {
  kExitPass = 0,
  kExitDivergence = 1,   // a compiled path diverged, raised, failed an assertion, or an expectation failed
  kExitInvalid = 2,      // invalid model or usage (or the eager reference itself failed)
  kExitInternal = 3,     // a bug in gbcheck's own code (not in a compiled path)
  kExitEnvironment = 4,  // the environment cannot serve the request (no GPU, missing packages)
};

/// One judged tensor: an output, a graph input after the run ("state"), or the outputs' drift
/// over the steps ("drift").
struct OutputCheck {
  enum class Kind { Output, State, Drift };
  std::string output;
  Kind kind = Kind::Output;
  std::string oracle = "tolerance";  // the oracle that failed it (the deciding one), else the first that judged
  Tolerance tolerance;
  ErrorStats stats;
  bool pass = true;
  std::string detail;       // the failing oracle's explanation
  std::string min_passing;  // the least tolerance or setting that would have passed
  std::vector<Verdict> verdicts;  // every oracle that judged it, overruled ones included

  /// Names of the oracles whose verdicts fail it, the deciding one (`oracle`) first.
  std::vector<std::string> failed_oracles() const;
  /// "output", "state", "drift": how reports and JSON write a kind.
  static std::string kind_name(Kind kind);
};

/// How a path that returned no outputs failed: it raised an error (an op's, a c10 error's), or an
/// assertion of its own broke (gbc's InternalError, c10's INTERNAL ASSERT): the compiler's own bug,
/// reported as that backend's failure like a divergence; only the harness's faults exit 3.
enum class PathErrorKind { Raised, InternalError };
/// "raised", "internal-error": how reports, JSON and failure signatures write a kind.
std::string path_error_kind_name(PathErrorKind kind);

/// A failing case after shrinking: smaller dims, simpler layouts and values, still failing.
struct ShrunkCase {
  std::string path;  // --shrink PATH
  DimBindings dims;
  std::vector<std::string> inputs;  // descriptions of the shrunk inputs
  std::string error;
  SourceLoc error_loc;
  std::vector<OutputCheck> outputs;  // the failing ones
  int tried = 0;     // candidates run
  int steps = 0;     // shrinks taken
  bool budget_exhausted = false;
};

struct CaseFailure {
  int index = 0;
  uint64_t seed = 0;
  std::string shrink_path;  // the case was itself run from --shrink PATH ("" : as first drawn)
  DimBindings dims;
  std::vector<std::string> inputs;  // descriptions: shape, layout, special values
  std::string error;       // set when the backend raised instead of returning outputs
  SourceLoc error_loc;
  PathErrorKind error_kind = PathErrorKind::Raised;
  std::vector<OutputCheck> outputs;  // the outputs that failed
  std::optional<ShrunkCase> shrunk;
  std::string shrink_note;  // why the case was not shrunk, when it was not

  std::vector<std::string> failed_oracles() const;
};

/// The per-step error of one case under check.iterations (drift oracle; plotted with --plots).
struct DriftSeries {
  int case_index = 0;
  bool pass = true;
  std::vector<DriftStep> steps;
};

struct BackendReport {
  std::string backend;
  int cases_run = 0;
  int cases_failed = 0;
  double worst_abs = 0.0;
  double worst_rel = 0.0;
  BackendStats stats;
  std::vector<CaseFailure> failures;  // the first few, in case order
  std::vector<std::string> expectation_failures;
  std::vector<DriftSeries> drift;   // the first kMaxDriftSeries cases, with check.iterations
  std::vector<std::string> notes;   // what was not judged and why (each once)
  bool pass() const { return cases_failed == 0 && expectation_failures.empty(); }
};

constexpr size_t kMaxDriftSeries = 20;

/// A case on which eager disagreed with itself: not a usable reference, so no backend was judged.
struct UnusableCase {
  int index = 0;
  uint64_t seed = 0;
  std::string reason;
};

struct CheckReport {
  std::string model_name;
  std::string model_path;
  std::string device;
  std::string injected_fault;  // --inject-fault (a testing aid); replays must repeat it
  std::string torch_version;
  std::string gbcheck_version;
  uint64_t seed = 0;
  int cases = 0;
  std::optional<int> only_case;
  std::string only_shrink;            // --shrink PATH with --case
  std::vector<std::string> oracles;   // the oracles in use
  std::string error_stat;             // "elementwise", "quantile 0.99", ...
  int iterations = 0;                 // check.iterations.steps (0: single step)
  /// What every backend is compared with: "eager" (LibTorch's kernels node by node), or the
  /// backend --reference named.
  std::string reference = "eager";
  std::vector<BackendReport> backends;
  std::vector<UnusableCase> unusable;
  int cases_judged = 0;  // cases with a usable reference
  // Set when the reference itself failed: with eager, the model cannot be checked with these
  // inputs (exit code 2); with another backend as the reference, that backend failed (exit code 1).
  std::string eager_error;
  SourceLoc eager_error_loc;
  int eager_error_case = -1;
  std::string print_output;  // what the model's print nodes wrote in the eager reference
  double elapsed_ms = 0.0;
  // --inputs as given, and the generated cases before them: a replay of any case needs both.
  std::vector<std::string> given_inputs;
  int generated_cases = 0;

  bool pass() const;
  int exit_code() const;
  /// No case could be judged: eager disagreed with itself on every one.
  bool no_usable_case() const { return cases_judged == 0 && !unusable.empty(); }
  bool eager_reference() const { return reference == "eager"; }
  /// The command that replays a case: `gbcheck MODEL --backend B [--reference R] --seed S --case K
  /// [--shrink P]` (with `--inputs F... --cases N` when the run had given inputs).
  std::string replay_command(const std::string& backend, int case_index, const std::string& shrink_path) const;
  /// Why the check did not pass, in one line ("nnc-py failed drift; gbc raised"), for a summary
  /// of several models; "" when it passed.
  std::string failure_summary() const;
};

/// What a replay command needs to number the user's own cases as the run did: ` --inputs PATH...
/// --cases N` (N generated cases come first), or "" without --inputs.
std::string given_inputs_flags(const std::vector<std::string>& paths, int generated_cases);

}  // namespace gbc
