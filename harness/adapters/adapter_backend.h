// An external backend: a compiler run by an adapter process (docs/adapters.md) behind gbcheck's
// Backend interface, so that check, explain, bench, reduce, repro and fuzz use it like a built-in
// one. prepare() sends the model (its model.yaml form and TorchScript source) to the backend's
// adapter session; run() sends a case's inputs and returns the adapter's outputs, its compile
// events mapped onto the model's nodes. Any failure of the adapter (crash, hang, memory,
// garbage, an error it reports) is raised from run() as one line naming what went wrong, so the
// check counts it as a failure of this backend; the adapter's stderr goes to the log.
// A process that checks each model in a forked child (fuzz) keeps the adapters running in
// itself (keep_adapters_running()), so that every child borrows one instead of starting its own.
// Test: tests/adapters/adapter_failures_test.cpp (through gbcheck, with broken adapters),
// tests/adapters/adapter_fuzz_test.cpp (one adapter across a fuzz worker's graphs).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/backends/backend.h"
#include "harness/adapters/adapter_spec.h"

namespace gbc {

std::unique_ptr<Backend> make_adapter_backend(const AdapterSpec& spec);

/// The hello gbcheck sends the adapter of `spec` for backends prepared with `options`: a
/// session serves the backends whose hellos are the same.
nlohmann::json adapter_hello(const AdapterSpec& spec, const BackendOptions& options);

/// Starts the adapter of each external backend among `backends` for `options` in this process,
/// or restarts one that is not idle (a child left it failed, mid-answer or holding models), so
/// that the children forked next borrow it. Built-in backends are skipped.
void keep_adapters_running(const std::vector<std::string>& backends, const BackendOptions& options);

}  // namespace gbc
