// The second step of `gbcheck bisect`: within the first diverging stage, the compiler pass whose
// absence makes the divergence go away. All candidate passes are disabled together first (if the
// stage still diverges, no pass is to blame: the bug is in the stage's lowering, runtime or code
// generation); then the candidates are halved while one half alone removes the divergence, and
// tried one at a time when neither half does (passes that only matter together).
// Test: tests/bisect/bisect_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "harness/bisect/stage_probe.h"

namespace gbc {

struct PassProbe {
  std::vector<std::string> disabled;
  bool diverged = false;
};

struct PassBisection {
  std::vector<std::string> candidates;  // the passes the stage runs that were not already disabled
  std::string pass;                     // the one whose absence removes the divergence ("" : none)
  std::vector<std::string> together;    // when only several disabled together remove it
  std::vector<PassProbe> probes;        // every check run, in order
  std::string note;                     // why no pass was named
};

/// The passes `stage` runs: none for trace (and backends outside gbc's ladder), the graph
/// pipeline for decomp, the pipeline and the fusion partitioner ("fuse") for gbc-interp and gbc.
std::vector<std::string> passes_of_stage(const std::string& stage);

PassBisection bisect_passes(const Model& model, const std::string& stage, const ProbeOptions& options);

}  // namespace gbc
