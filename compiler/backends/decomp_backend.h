// The `decomp` backend, the second rung of gbc's ladder: regions as `trace` captures them, each run
// through gbc's graph pipeline (functionalize, fold_conv_bn, decompose, constant_fold, cse, dce:
// compiler/passes/pass_manager.h) and then op by op on ATen. A divergence that appears here and not
// under trace is a graph pass's (find which with --disable-pass). Reports what trace reports;
// --log passes shows the IR after each pass that changed it. Tests: tests/runtime/backends_test.cpp.
#pragma once

#include <memory>

#include "compiler/backends/backend.h"

namespace gbc {

std::unique_ptr<Backend> make_decomp_backend();

}  // namespace gbc
