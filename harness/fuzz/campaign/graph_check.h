// Checks one generated graph for the fuzzer: eager against every backend with all of the model's
// oracles, in a child process under a time and memory limit (harness/sandbox), and turns what
// happened into store hits (harness/store/fuzz_store.h), one per failing backend.
// Dedupe keys are failure signatures (harness/reduce/failure_signature.h) narrowed for raw,
// unreduced graphs: a divergence keeps only the ops that directly produce the failing outputs (a
// random graph's whole ancestry would make every hit unique), and errors, internal errors (a
// compiled path's own assertion), crashes, timeouts and out-of-memory keep none (the op is not
// known before reduction). A compiled path whose generated kernels the host compiler rejects
// (fallback FB001: their nodes run on ATen and the outputs pass) fails with an internal error of
// its own, "generated kernel rejected by the host compiler (FB001)": invalid generated code is
// the code generator's bug (issue 18: such mutants of gbc's codegen went unseen). When the child
// dies while several backends ran, each backend is rerun alone to pin the death on the ones that
// cause it. A graph the eager reference cannot run, or a check that throws outside every compiled
// path, is `invalid`: a bug in gbcheck's generator or harness, recorded under its own signature.
// Tested in tests/fuzz/fuzz_campaign_test.cpp; the FB001 rule in tests/fuzz/fuzz_cli_test.cpp; the
// adapters across graphs in tests/adapters/adapter_fuzz_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "compiler/backends/backend.h"
#include "harness/model/model.h"
#include "harness/reduce/failure_signature.h"
#include "harness/runner/check_runner.h"
#include "harness/sandbox/sandbox.h"
#include "harness/store/fuzz_store.h"

namespace gbc {

struct GraphCheckOptions {
  std::vector<std::string> backends;
  BackendOptions backend_options;  // device, kernel cache, --inject-fault
  SandboxLimits limits{60.0, size_t{4} << 30};
};

struct GraphFailure {
  Hit hit;                      // what the store records (hit.key is the dedupe key)
  FailureSignature signature;   // the narrowed signature behind hit.key
};

struct GraphVerdict {
  std::string outcome = "pass";  // pass | fail | invalid
  std::vector<GraphFailure> failures;
  double elapsed_ms = 0;
};

GraphVerdict check_graph(const Model& model, const GraphCheckOptions& options);

/// The settings check_graph's child runs the model's check with.
RunOptions graph_check_run_options(const Model& model, const GraphCheckOptions& options);

/// The dedupe key of a signature: its text ("gbc divergence tolerance [sum]").
std::string dedupe_key(const FailureSignature& signature);

}  // namespace gbc
