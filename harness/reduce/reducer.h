// The model reducer behind `gbcheck reduce`: from a model and a failing case, the smallest model
// that still fails the same way (failure_signature.h), by delta debugging to a fixed point. Its
// passes (reduction_pass_names()) run in the order of the schedule in configs/reduce.yaml
// (reduce_config.h), rounds repeated until one makes no progress:
//   - remove_outputs, lift_outputs: removing outputs, or moving one up to an input of the node
//     that made it,
//   - remove_nodes: a removed node's users read a new graph input holding the value it had, or
//     one of its own arguments when dtype and shape fit; dead nodes and unused inputs go with it,
//   - shrink_dims: halving a dim's size, or a literal size shared by inputs, while it fails,
//   - simplify_dtypes, simplify_attributes: inputs toward float32/int64, attributes dropped or
//     set to 0/1,
//   - simplify_values: whole tensors to 0 or 1, then chunks of elements to 0 (what is left shows
//     which elements matter).
// The real failing inputs are kept and carried through every step, never redrawn. Every candidate
// runs in the sandbox with a timeout; one that fails the same way is rechecked before it is
// accepted, and a check that flips between runs stops the reduction as nondeterministic.
// Test: tests/reduce/reducer_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backends/backend.h"
#include "harness/inputs/tensor_layout.h"
#include "harness/inputs/user_inputs.h"
#include "harness/model/model.h"
#include "harness/reduce/failure_signature.h"
#include "harness/reduce/reduce_config.h"
#include "harness/sandbox/sandbox.h"

namespace gbc {

struct ReduceProgress {
  std::string phase;  // outputs, nodes, layouts, dims, dtypes, attributes, values
  int nodes_left = 0;
  int candidates = 0;  // candidates built (invalid ones included)
  int checks = 0;      // sandboxed checks run
  double elapsed_s = 0.0;
  bool accepted = false;  // this report follows an accepted candidate
};

struct ReduceOptions {
  /// The path whose failure to keep; "" means the first of the model's check.backends that fails.
  std::string backend;
  /// What it is compared with: "eager", or a backend's name (--reference).
  std::string reference = "eager";
  /// The case to reduce (drawn from the model's check.seed, or one of given_cases); none: the
  /// first failing one.
  std::optional<int> only_case;
  /// The user's own cases (--inputs), tried after the drawn ones, as cases generated_cases and up
  /// (as `gbcheck check` numbers them); a failure on one keeps its values.
  std::vector<GivenCase> given_cases;
  /// Drawn cases tried first (--cases; 0 with given_cases: only those); -1: the model's check.cases.
  int generated_cases = -1;
  bool fullgraph = false;
  BackendOptions backend_options;
  /// Paths besides backend_registry()'s (tests plant faulty backends this way).
  std::vector<BackendInfo> extra_backends;
  /// Per candidate. The memory limit is on top of what the reducer's process already maps.
  SandboxLimits limits{30.0, size_t{4} << 30};
  /// Stop after this many sandboxed checks (0: no limit); the best model so far is the result.
  int max_checks = 0;
  /// The schedule and its numbers; nullopt: configs/reduce.yaml's (load_reduce_config()).
  std::optional<ReduceConfig> config;
  std::function<void(const ReduceProgress&)> on_progress;
};

/// A graph input's failing values, by the name the reduced model gives it.
struct NamedTensor {
  std::string name;
  at::Tensor tensor;   // contiguous values
  LayoutPlan layout;   // the view the failure needs them in (Contiguous where none)
};

struct ReduceResult {
  enum class Status {
    Reduced,           // `model` fails with `signature` (possibly it could not be made smaller)
    NotFailing,        // no case of the model fails on the chosen backend(s)
    Nondeterministic,  // the same candidate passed and failed on two runs: see `note`
  };
  Status status = Status::NotFailing;
  std::string backend;
  std::string reference = "eager";
  int case_index = 0;
  uint64_t seed = 0;  // the model's check.seed the case was drawn from
  FailureSignature original;
  FailureSignature signature;  // of the reduced model (same_failure as `original`)
  Model model;                       // the reduced model (dims fixed to the failing sizes)
  std::vector<NamedTensor> inputs;   // its failing inputs and params, graph.inputs order
  /// The reduced model's own drawn inputs fail the same way at case `replay_case` (inputs whose
  /// failing values are one constant are written as `dist: const`, which helps).
  bool reproduces_with_drawn_inputs = false;
  int replay_case = 0;
  int nodes_before = 0;
  int nodes_after = 0;
  int candidates = 0;
  int checks = 0;
  int accepted = 0;
  bool budget_exhausted = false;  // max_checks was reached
  double elapsed_s = 0.0;
  std::string note;  // NotFailing / Nondeterministic: why
  std::string inject_fault;  // the fault gbc was built with (a testing aid); replays need it too

  /// `gbcheck check MODEL --backend B [--reference R] --case K [--inject-fault F]` for the reduced model at `path`.
  std::string replay_command(const std::string& path) const;

  static std::string status_name(Status status);  // reduced, not-failing, nondeterministic
};

/// The reduction passes a schedule may name, in the order configs/reduce.yaml runs them.
const std::vector<std::string>& reduction_pass_names();

/// Reduces `model`. Throws ModelError for an unknown backend or an invalid oracle selection, and
/// ConfigError for an invalid options.config.
ReduceResult reduce_model(const Model& model, const ReduceOptions& options);

/// Writes DIR/model.yaml (with a comment header saying what it reproduces and how to replay it),
/// DIR/inputs.json (the failing input values) and DIR/summary.json. Creates DIR. Throws
/// std::runtime_error when it cannot write.
void write_reduction(const ReduceResult& result, const std::string& source_path, const std::string& dir);

/// Schema gbcheck.reduce/v1 (docs/json-report.md is for checks; the fields are in docs/cli.md).
nlohmann::json reduction_summary_json(const ReduceResult& result, const std::string& source_path,
                                      const std::string& out_dir);
/// The failing inputs as JSON: {name: {dtype, shape, values: [...]}}, NaN and infinities as strings.
nlohmann::json inputs_json(const std::vector<NamedTensor>& inputs);
/// The inputs the reduced failure needs as views: "x0 expanded along dim 0, w transposed"; "" if none.
std::string kept_layouts_text(const ReduceResult& r);

}  // namespace gbc
