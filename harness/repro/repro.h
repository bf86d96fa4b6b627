// `gbcheck repro MODEL.yaml --out DIR`: a folder a compiler maintainer can run without gbcheck.
// Finds the failing case (the first one, or --case K) with a sandboxed check, so a backend that
// crashes is reproduced too; saves the case's inputs, eager's outputs and the failing backend's
// outputs (tensor_files.h); writes model.yaml (the model as given), manifest.json, repro.py,
// repro.cpp with its CMakeLists.txt (repro_sources.h) and README.md (repro_readme.h).
// Test: tests/repro/repro_test.cpp (label repro: builds repro.cpp with cmake and runs it).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/model/model.h"
#include "harness/runner/check_runner.h"

namespace gbc {

struct ReproOptions {
  RunOptions run;                 // resolved from the command line (backend options, fault, cases)
  std::string backend;            // the failing backend
  std::string out_dir;
  std::optional<int> case_index;  // --case K; else the first failing case
  double timeout_s = 300.0;       // per sandboxed run
};

struct OutputDiff {
  std::string output;
  int64_t elements = 0, mismatches = 0;
  int64_t worst_index = -1;  // flat index of the largest absolute error
  double expected = 0.0, observed = 0.0;
  double rtol = 0.0, atol = 0.0;
};

struct ReproResult {
  bool reproduced = false;     // the case diverges (or the backend raised or crashed)
  int case_index = -1;
  uint64_t seed = 0;
  std::string observed_error;  // the backend raised or died instead of returning outputs
  std::vector<OutputDiff> diffs;
  std::vector<std::string> input_descriptions;
  std::vector<std::string> files;  // written, relative to out_dir
};

/// Writes the folder when a failing case exists (reproduced); otherwise writes nothing. Fork
/// safety as for harness/sandbox/sandbox.h. Throws std::runtime_error when files cannot be written
/// or the eager reference fails.
ReproResult write_repro(const Model& model, const ReproOptions& options);

}  // namespace gbc
