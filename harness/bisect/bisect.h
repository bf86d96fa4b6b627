// `gbcheck bisect MODEL.yaml`: where a divergence comes from, in three steps.
//   stage: walks gbc's ladder (trace -> decomp -> gbc-interp -> gbc, up to the target backend) and
//          stops at the first stage that diverges from eager (stage_probe.h);
//   pass:  within it, the pass whose absence removes the divergence (pass_bisect.h);
//   node:  the first IR node whose value diverges, read inside the fused kernels by the kernel-IR
//          interpreter (node_compare.h); a backend outside the ladder (an adapter) that shows its
//          node values gives them itself, with the nodes it declines and why.
// Each step comes with the command that shows it. Rendering: bisect_report.h.
// Test: tests/bisect/bisect_test.cpp, through adapters tests/adapters/python_adapters_test.cpp
// (BisectThroughAdapters...).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/bisect/node_compare.h"
#include "harness/bisect/pass_bisect.h"
#include "harness/bisect/stage_probe.h"

namespace gbc {

struct BisectOptions {
  RunOptions run;               // cases, seed, --case, backend options (disabled passes, fault, cache)
  std::string backend = "gbc";  // the target: the ladder is walked up to it
  double timeout_s = 300.0;     // per sandboxed check
  std::function<void(const std::string&)> on_progress;  // one line per check started
};

struct StageProbe {
  std::string stage;
  ProbeResult result;
};

struct BisectResult {
  std::string model_path;
  std::string target;
  std::string fault;  // --inject-fault, "" when none
  uint64_t seed = 0;
  std::string inputs_flags;  // " --inputs PATH... --cases N" when the run has the user's inputs
  std::vector<std::string> disabled_passes;  // by the user, kept in every check
  std::vector<StageProbe> ladder;            // the stages checked, in order
  std::string stage;                         // the first diverging one ("" : none diverges)
  int failing_case = -1;
  std::optional<PassBisection> passes;
  std::optional<NodeComparison> nodes;
  std::string stage_command, pass_command, node_command;

  bool diverged() const { return !stage.empty(); }
};

/// The stages walked for a target: gbc's ladder up to it, or the target alone outside the ladder.
std::vector<std::string> bisect_ladder(const std::string& target);

/// Runs the bisection. Fork safety: call from the main thread with ATen single-threaded
/// (harness/sandbox/sandbox.h). Throws std::runtime_error when a check cannot run at all.
BisectResult run_bisect(const Model& model, const BisectOptions& options);

}  // namespace gbc
