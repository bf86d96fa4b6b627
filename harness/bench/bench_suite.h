// `gbcheck bench DIR`: every model of a folder benched alike (bench_runner.h), summarized per
// backend as the geometric mean of its speedups over eager and its worst case; one missed
// check.expect.min_speedup (or a backend that raised) fails the whole suite, a model whose eager
// reference fails makes it invalid input.
// Test: tests/cli/bench_command_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "harness/bench/bench_runner.h"

namespace gbc {

/// One backend over the whole suite.
struct SuiteSummary {
  std::string backend;
  int models = 0;             // where it ran without raising
  double geomean = 0.0;       // of its speedups over eager
  double worst = 0.0;         // the smallest speedup...
  std::string worst_model;    // ...and where
  int below_min_speedup = 0;  // models whose check.expect.min_speedup it missed
  double reused_geomean = 0.0;  // the same over the speedups with outputs reused (CPU only)
  double reused_worst = 0.0;
  std::string reused_worst_model;
};

struct BenchSuite {
  std::string folder;
  std::vector<BenchReport> reports;  // in models_in_folder order (harness/model/model_folder.h)
  std::vector<std::string> invalid;  // "model: why", for models whose eager reference failed

  /// Backends in the order they first appear (eager excluded).
  std::vector<std::string> backends() const;
  SuiteSummary summary(const std::string& backend) const;
  /// Every model's failures, each prefixed with its model's name.
  std::vector<std::string> failures() const;
  /// 2 when a model is invalid, else 1 when anything failed, else 0.
  int exit_code() const;
};

/// The geometric mean (0 for none).
double geometric_mean(const std::vector<double>& values);

}  // namespace gbc
