// What judging a model's cases needs to know about the model, worked out once per check: each
// output's tolerance, which graph inputs the model may write into (their values after a run are
// compared too), which values depend on a training-mode dropout's random mask (they cannot be
// compared element by element unless the compiled path draws the same mask), the dropout nodes
// whose results are outputs (judged statistically), which outputs' zero signs IEEE 754 pins (the
// signed_zero oracle judges those), and the feedback of check.iterations. The
// oracles' own settings (which oracles, the error statistic) come from the check: section here, so
// that oracles/ knows nothing of models. Tests: tests/runner/check_runner_test.cpp,
// tests/oracles/stateful_oracles_test.cpp.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/ir/diagnostics.h"
#include "harness/model/model.h"
#include "oracles/output_judge.h"

namespace gbc {

struct DropoutOutput {
  ValueId input = kNoValue;  // the dropout's argument (captured from eager)
  double p = 0.5;
  bool training = true;
  bool input_is_unwritten_graph_input = false;  // a graph input no node writes: eval mode must be exact
};

struct JudgePlan {
  JudgeConfig config;  // tolerance per tensor is filled in per output
  int steps = 1;       // check.iterations.steps, or 1
  bool iterating = false;

  std::vector<std::string> output_names;
  std::vector<Tolerance> output_tol;
  /// Per output, its tolerance for every dtype: a case that passes other input dtypes
  /// (`dtypes:` lists) gets outputs of other dtypes, judged by their own dtype's tolerance.
  std::vector<std::map<DType, Tolerance>> output_tol_by_dtype;
  std::vector<bool> output_random;                     // depends on a training-mode dropout's mask
  std::vector<bool> output_zero_sign_pinned;           // IEEE pins its zeros' signs (zero_sign_cone.h)
  std::vector<std::optional<DropoutOutput>> dropout;   // outputs that are a dropout's result
  std::set<ValueId> capture;                           // values eager records (dropout inputs)

  std::vector<std::string> input_names;  // graph.inputs order
  std::vector<Tolerance> input_tol;
  std::vector<bool> input_mutable;  // the model may write into it (in-place ops, batch_norm stats)
  std::vector<bool> input_random;   // what it writes depends on a dropout mask
  std::vector<int> fed_by;          // per graph input: the output fed into it each step, or -1

  bool any_floating_output = false;
  bool has_rounding_threshold = false;  // an integer cast, floor, ... of a float value (oracles/threshold_rounding.h)

  /// Output o's tolerance when its result has dtype `actual`.
  const Tolerance& output_tolerance(size_t o, DType actual) const;
};

JudgePlan make_judge_plan(const Model& model);

/// Unknown names in check.oracle and an unknown check.error_stat, located at their keys.
Diagnostics validate_oracles(const CheckConfig& check);

}  // namespace gbc
