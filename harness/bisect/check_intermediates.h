// `gbcheck check --intermediates`: every node's value, not only the outputs, compared with
// eager's on every case of the check, for the backends that can show their node values (gbc's
// ladder: decomp runs the pipeline's graph op by op, gbc-interp and gbc run their fused kernels in
// the kernel-IR interpreter under a KernelObserver, as bisect's third step does: node_compare.h).
// The first diverging node is reported with its source location, like Polygraphy's mark-all.
// Adapters that offer node values (docs/adapters.md, the node_values feature) show them
// themselves: each is compared in graph order, and the nodes the compiler cannot show (folded,
// fused) are listed as declined with its reason. Backends that show only their outputs (eager
// is the reference; nnc, adapters without the feature) are listed with the reason. CPU only.
// Test: tests/bisect/bisect_test.cpp (IntermediatesNameTheFirstDivergingNode), the adapters'
// in tests/adapters/python_adapters_test.cpp (IntermediatesThroughAdapters...).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/bisect/node_compare.h"
#include "harness/runner/check_runner.h"

namespace gbc {

struct BackendIntermediates {
  std::string backend;
  bool compared = false;  // its node values could be compared
  int cases = 0;          // cases compared (up to the first divergence)
  int nodes = 0;          // nodes compared on a case
  std::optional<NodeDivergence> first;
  int first_case = -1;
  std::string note;  // why nothing was compared, or what agreement means
  std::vector<std::string> declined;  // nodes an adapter has no value for: "name: why"

  bool pass() const { return !first.has_value(); }
};

/// Compares the node values of every backend of `options` (its cases, or --case) with eager's.
std::vector<BackendIntermediates> check_intermediates(const Model& model, const RunOptions& options);

void print_intermediates(const std::vector<BackendIntermediates>& results, std::ostream& out);
nlohmann::json intermediates_json(const std::vector<BackendIntermediates>& results);

}  // namespace gbc
