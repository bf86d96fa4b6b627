// Checking a model in the sandbox (harness/sandbox/sandbox.h), so that a backend that crashes,
// hangs or exhausts memory costs one failed check, not the caller: one case on given input tensors
// against one backend (what the reducer runs for every candidate), or a whole `gbcheck check` run
// (what the fuzzer runs for every generated model). Both come back with failure signatures.
// The adapters of external backends run in the calling process, kept alive across checks, and
// each child borrows them (harness/adapters/adapter_backend.h: keep_adapters_running()).
// Call from a process whose ATen is single-threaded (see the fork caveat in sandbox.h).
// Test: tests/reduce/reducer_test.cpp; through an adapter tests/adapters/adapter_fuzz_test.cpp
// (ReduceKeepsOneAdapter...).
#pragma once

#include <ATen/core/Tensor.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "compiler/backends/backend.h"
#include "harness/model/model.h"
#include "harness/reduce/failure_signature.h"
#include "harness/runner/check_runner.h"
#include "harness/sandbox/sandbox.h"

namespace gbc {

/// One case judged on one backend.
struct CaseOutcome {
  enum class Kind {
    Pass,     // the backend agreed with eager
    Fail,     // it diverged, raised, crashed, hung or ran out of memory: see `signature`
    Invalid,  // eager itself failed or disagreed with itself: these inputs cannot judge anything
  };
  Kind kind = Kind::Pass;
  FailureSignature signature;  // Fail
  std::string description;     // one line: what failed, or why the case is invalid
  SandboxResult sandbox;       // how the child ended (value stripped)

  bool failed() const { return kind == Kind::Fail; }
};

struct CaseCheck {
  int case_index = 0;
  uint64_t case_seed = 0;  // seeds the RNG of random ops (dropout) as the check runner does
  const BackendInfo* backend = nullptr;
  const BackendInfo* reference = nullptr;  // what the backend is compared with; nullptr: eager
  BackendOptions backend_options;
  bool fullgraph = false;  // a graph break is a failure (signature kind graph-break)
  SandboxLimits limits;
};

/// Runs the reference (twice) and the backend on copies of `inputs` (graph.inputs order, on the device of
/// backend_options) in a child process and judges the outputs with the model's oracles.
CaseOutcome check_case_sandboxed(const Model& model, const std::vector<at::Tensor>& inputs, const CaseCheck& check);

/// A whole check run in the sandbox.
struct SandboxedCheck {
  SandboxResult sandbox;
  nlohmann::json report;  // check_report_to_json when the child returned (docs/json-report.md)
  int exit_code = 0;      // the check's exit code; kExitDivergence when the child did not return
  /// One per failing backend: its first failure, or (when the child did not return) one per
  /// backend run, since the child's death cannot be pinned on one of them.
  std::vector<FailureSignature> signatures;
};
SandboxedCheck run_check_sandboxed(const Model& model, const RunOptions& options, const SandboxLimits& limits);

}  // namespace gbc
