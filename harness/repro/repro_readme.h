// README.md of a repro folder: what was expected, what was observed (errors, worst element), the
// inputs, how to replay it (gbcheck, repro.cpp, repro.py) and the environment it was made in
// (LibTorch, CUDA, GPU, host compiler, gbcheck, OS). Test: tests/repro/repro_test.cpp.
#pragma once

#include <string>

#include "harness/repro/repro.h"

namespace gbc {

std::string repro_readme(const Model& model, const ReproOptions& options, const ReproResult& result);

/// One line each: "LibTorch 1.13.0", "CUDA: not available", ... (also printed by `gbcheck repro`).
std::vector<std::string> repro_environment();

}  // namespace gbc
