// The `check:` section of a model: how many cases, which compiled paths, which tolerances and
// oracles, and what the compilers are expected to do (graph breaks, fallbacks, speedup).
// Every key is documented in docs/model-format.md; defaults are those below.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/diagnostics.h"
#include "compiler/ir/dtype.h"
#include "oracles/tolerance.h"

namespace gbc {

struct Expectation {
  std::optional<int> graph_breaks;
  std::optional<int> fallbacks;
  std::optional<int> recompiles;
  std::optional<double> min_speedup;  // compiled over eager; checked by `gbcheck bench`
  /// Per-backend overrides (`expect: {fallbacks: 0, nnc: {fallbacks: 1}}`): each key given there
  /// replaces the general one for that backend.
  std::map<std::string, Expectation> per_backend;

  /// The expectation for one backend: the general keys, overridden by its own.
  Expectation for_backend(const std::string& backend) const;
};

struct IterationSpec {
  int steps = 0;  // 0: single-step check
  std::vector<std::pair<std::string, std::string>> feedback;  // output -> input, per step
};

struct CheckConfig {
  uint64_t seed = 0;
  int cases = 20;
  std::string device = "cpu";                   // cpu | cuda
  std::vector<std::string> backends = {"gbc"};  // compiled paths compared with eager
  std::map<DType, Tolerance> tolerance;          // overrides of the presets
  /// The presets per dtype of this run (--tolerances-config on configs/tolerances.yaml); a dtype
  /// missing here takes the shipped one (tolerance_presets.h).
  std::map<DType, Tolerance> tolerance_presets;
  std::map<std::string, Tolerance> output_tolerance;  // per-output overrides (win over dtype)
  bool equal_nan = true;
  Expectation expect;

  // Oracles (issue: oracles). Empty: every oracle that applies.
  std::vector<std::string> oracles;
  std::string error_stat = "elementwise";  // elementwise | max | mean | quantile
  double quantile = 0.99;                  // with error_stat: quantile
  double fp64_multiplier = 2.0;

  // Compiler behaviour (gbc), mirroring torch.compile's knobs.
  std::string dynamic = "auto";  // false | true | auto (static first, dynamic after a shape change)
  int cache_size_limit = 8;
  bool capture_scalar_outputs = false;
  bool reorderable_logging = false;
  bool rewrite_if = false;

  // Inputs.
  double special_values = 0.0;         // rate of NaN/Inf/-0/subnormal/huge values
  std::string layouts = "contiguous";  // contiguous | any
  /// Cases 1 to 4 change one thing each (sizes, then layouts, then dtypes, then back to case 0's),
  /// the sequence where guard and recompile bugs live (harness/inputs/case_gen.h).
  bool recompile_sequence = false;
  IterationSpec iterations;

  SourceLoc loc;                                // of the check: section
  std::map<std::string, SourceLoc> key_locs;    // of each key given, for later errors

  /// The output's own entry, else its dtype's (check.tolerance, then the presets).
  Tolerance tolerance_for(DType dtype, const std::string& output) const;
  /// check.tolerance's entry for the dtype, else the preset.
  Tolerance dtype_tolerance(DType dtype) const;
  SourceLoc loc_of(const std::string& key) const;
};

}  // namespace gbc
