// Runs one test case and judges it: the reference twice (a reference that disagrees with itself is
// not usable; eager's executor unless another backend is the reference), then each path under test on fresh copies of the same inputs with the same RNG seed,
// twice for compiled paths (determinism), over check.iterations' steps with outputs fed back, and
// every output, mutated input and the per-step drift judged by the selected oracles. The float64
// reference is computed at most once per case, and only when a tolerance check fails.
// Test: tests/runner/check_runner_test.cpp.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/backends/backend.h"
#include "harness/inputs/input_generator.h"
#include "harness/runner/check_report.h"
#include "harness/runner/judge_plan.h"

namespace gbc {

struct EagerOptions;  // compiler/aten/eager_executor.h

struct PathUnderTest {
  Backend* backend = nullptr;
  bool compiled = true;  // determinism is only checked for compiled paths
};

struct PathResult {
  std::string error;  // the path raised, or failed an assertion of its own (error_kind)
  SourceLoc error_loc;
  PathErrorKind error_kind = PathErrorKind::Raised;
  bool process_failure = false;  // the error is a BackendProcessError: not shrunk
  std::vector<OutputCheck> checks;  // every judged tensor, passing or not
  std::vector<DriftStep> drift;     // per step, with check.iterations
  std::vector<std::string> notes;
  std::vector<at::Tensor> outputs;  // the last step's, when the path ran

  bool failed() const;
  std::vector<std::string> failed_oracles() const;
  std::vector<OutputCheck> failing_checks() const;
};

struct CaseResult {
  std::string eager_error;  // the reference raised (eager: the model cannot run on these inputs)
  SourceLoc eager_error_loc;
  std::string unusable;  // the reference disagreed with itself
  // A path's kernels faulted on the GPU (the message): the CUDA context is unusable for the rest of
  // the process, so this case stops here and no later case can run.
  std::string device_lost;
  std::vector<PathResult> paths;
  std::vector<at::Tensor> eager_outputs;  // the last step's, when eager ran
};

/// What every path is compared with: eager's executor, or a backend prepared on the model (not
/// owned) under the name the user gave it.
struct Reference {
  Backend* backend = nullptr;
  std::string name = "eager";
};

/// The first of a model's dtype variants (its graph in each, the graph as loaded first) whose
/// graph inputs have the dtypes of `tensors` (graph.inputs order); 0 when none has.
int64_t matching_dtype_variant(const std::vector<const Graph*>& variants, const std::vector<at::Tensor>& tensors);

class CaseRunner {
 public:
  CaseRunner(const Model& model, const JudgePlan& plan, c10::Device device, Reference reference = {});

  /// `prints` receives the model's print output from eager's first step (nullptr: discarded).
  /// `self_check` runs eager a second time to make sure the reference is deterministic.
  CaseResult run(const TestCase& tc, const std::vector<PathUnderTest>& paths, std::ostream* prints,
                 bool self_check = true);

 private:
  /// The float64 reference's outputs, in `inputs_after` the graph inputs as it left them (the
  /// params it updated, in float64), and in `captured` its values of the plan's captured values
  /// (dropout arguments) from the last step. Empty on failure, which `failure` explains.
  std::vector<at::Tensor> run_fp64(const TestCase& tc, std::string& failure, std::vector<at::Tensor>& inputs_after,
                                   std::map<ValueId, at::Tensor>& captured);
  /// The float64 reference's outputs with every thresholded float value (an integer cast's input,
  /// floor's, a comparison's tensor, ...) moved down (-1) or up (+1) by its float tolerance, or by
  /// eager's own error there where that is larger (`eager` and `reference`: the captured values of
  /// this case's eager run and plain reference; oracles/threshold_rounding.h); empty on failure.
  std::vector<at::Tensor> run_fp64_nudged(const TestCase& tc, int direction, const std::map<ValueId, at::Tensor>& eager,
                                          const std::map<ValueId, at::Tensor>& reference);
  /// run_fp64's steps on `graph`, whose inputs after the model's take `extra_inputs`.
  std::vector<at::Tensor> run_fp64_graph(const Graph& graph, const TestCase& tc, std::string& failure,
                                         std::vector<at::Tensor>& inputs_after, std::map<ValueId, at::Tensor>& captured,
                                         const std::vector<at::Tensor>& extra_inputs = {});
  /// Records the plan's captured values (dropout arguments) of a run of `graph` on `in` into
  /// `captured`: the graph inputs among them now, as the step receives them, and the node values
  /// through `eo.on_value`.
  void capture(const Graph& graph, const std::vector<at::Tensor>& in, EagerOptions& eo,
               std::map<ValueId, at::Tensor>& captured) const;

  /// The dtype variant of the model's `dtypes:` lists that tc's inputs match (0, the graph as
  /// loaded, when none does): the float64 reference rounds where that variant stores half floats,
  /// not where another does.
  int64_t variant_of(const TestCase& tc);
  /// The model's graph in dtype variant k (variant_of's answer).
  const Graph& variant_graph(int64_t k);

  // The float64 references of one dtype variant, made on first need.
  struct Fp64Graphs {
    std::optional<Graph> plain;
    std::optional<Graph> nudged[2];     // thresholded values moved down, up
    std::vector<ValueId> nudged_slack[2];  // the thresholded values whose slack inputs they take, in order
  };

  const Model& model_;
  const JudgePlan& plan_;
  c10::Device device_;
  Reference reference_;
  std::map<int64_t, Graph> variant_graphs_;  // dtype variants 1.. of the model's graph
  std::map<int64_t, Fp64Graphs> fp64_;       // by dtype variant
};

/// One run's results and its graph inputs as the run left them (graph.inputs order).
struct RunTensors {
  const std::vector<at::Tensor>& outputs;
  const std::vector<at::Tensor>& inputs;
};

/// Why two runs of the reference (named `reference`) on the same step, inputs and seed make an
/// unusable reference (an output, or an input the model updates, differs bit for bit), or "" when
/// they agree.
std::string reference_disagreement(const JudgePlan& plan, const RunTensors& first, const RunTensors& second, int step,
                                   const std::string& reference = "eager");

/// The RNG seed of a step: the case seed at step 0, then derived from it.
uint64_t step_seed(uint64_t case_seed, int step);

}  // namespace gbc
