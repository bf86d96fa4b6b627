// Backends added at run time: the adapters of configs/backends.yaml (harness/adapters/) join
// backend_registry() after the built-in ladder. What a BackendInfo does not say about a backend,
// whether it is external and whether it can run here, is kept here for every backend.
// Test: tests/adapters/backends_config_test.cpp.
#pragma once

#include <functional>
#include <string>

#include "compiler/backends/backend.h"

namespace gbc {

/// Adds a backend defined outside the compiler; a later registration of the same name replaces
/// the earlier one. `unavailable` says why it cannot run here ("" when it can; it may be slow,
/// and is asked only when needed). Throws std::invalid_argument for a built-in backend's name.
/// Registration invalidates references into backend_registry(): register before looking up.
void register_backend(BackendInfo info, std::function<std::string()> unavailable);

/// Registered at run time (an adapter), not built in.
bool is_external_backend(const std::string& name);

/// Why the backend cannot run here ("needs a CUDA device"); "" when it can or is unknown.
std::string backend_unavailable_reason(const std::string& name);

}  // namespace gbc
