// Creating and preparing a path under test. A backend whose prepare() throws (gbc capturing the
// graph, NNC emitting TorchScript, an adapter's session) has failed, not the harness: it comes back
// as a path that throws the same exception on every run, so the case runner reports it as that
// backend's failure (internal-error for an assertion) exactly as it reports an error raised while
// running. Test: tests/runner/check_runner_test.cpp.
#pragma once

#include <memory>

#include "compiler/backends/backend.h"

namespace gbc {

/// `info.create()` prepared for `graph`. InternalError when the factory creates nothing (the
/// registry's bug, not the backend's).
std::unique_ptr<Backend> prepare_path(const BackendInfo& info, const Graph& graph, const BackendOptions& options);

}  // namespace gbc
