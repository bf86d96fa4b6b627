// The `trace` backend, the first rung of gbc's ladder: the graph as captured (split at its graph
// breaks into compiled regions and eager islands, with guards and recompiles) but each region run
// op by op on ATen, with no graph pass and no kernel. A divergence here is a capture bug (a break,
// a deferred print, a rewritten if); torch.compile(backend="eager") is the same idea.
// Reports graph breaks, recompiles and cache-limit fallbacks; extern_calls counts the matmul,
// linear, bmm and conv2d nodes inside regions. Tests: tests/runtime/backends_test.cpp.
#pragma once

#include <memory>

#include "compiler/backends/backend.h"

namespace gbc {

std::unique_ptr<Backend> make_trace_backend();

}  // namespace gbc
