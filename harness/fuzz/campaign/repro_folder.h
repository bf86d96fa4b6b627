// The repro folder of a new signature, for triage in the morning:
//   DIR/original.yaml  the generated graph that failed, with a header saying how to regenerate
//                      and recheck it;
//   DIR/reduced/       the reducer's minimized model (harness/reduce/reducer.h: model.yaml,
//                      inputs.json, summary.json), when it still fails the same way;
//   DIR/repro/         the standalone folder of `gbcheck repro` (harness/repro/repro.h: saved
//                      inputs, repro.py, repro.cpp, README.md) for the reduced model, or for the
//                      original when the reduced one does not fail with its own drawn inputs.
// Failures of the generator or the harness (backend eager or gbcheck) get only original.yaml:
// there is no backend to reduce against. Tested in tests/fuzz/fuzz_campaign_test.cpp.
#pragma once

#include <string>

#include "harness/fuzz/campaign/graph_check.h"
#include "harness/model/model.h"

namespace gbc {

struct ReproFolderOptions {
  GraphCheckOptions check;  // backends, backend options, the sandbox limits of each candidate
  /// Sandboxed checks the reducer may run (0: original.yaml only).
  int max_checks = 300;
  /// gbcheck-gen options and extra gbcheck options for the replay line in the header.
  std::string gen_args;
  std::string check_args;
};

/// Writes the folder; returns "done" when it holds a reduction (or none applies), "failed" when
/// the reducer could not keep the failure (flaky, not reproduced on one backend alone, or the
/// backend's first failing case fails in another way). Throws std::runtime_error when it cannot
/// write.
std::string write_repro_folder(const Model& model, const GraphFailure& failure, const std::string& dir,
                               const ReproFolderOptions& options);

}  // namespace gbc
