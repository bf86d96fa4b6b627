// An external backend: a compiler run by an adapter process (docs/adapters.md) behind gbcheck's
// Backend interface, so that check, explain, bench, reduce, repro and fuzz use it like a built-in
// one. prepare() sends the model (its model.yaml form and TorchScript source) to the backend's
// adapter session; run() sends a case's inputs and returns the adapter's outputs, its compile
// events mapped onto the model's nodes. Any failure of the adapter (crash, hang, memory,
// garbage, an error it reports) is raised from run() as one line naming what went wrong, so the
// check counts it as a failure of this backend; the adapter's stderr goes to the log.
// Test: tests/adapters/adapter_failures_test.cpp (through gbcheck, with broken adapters).
#pragma once

#include <memory>

#include "compiler/backends/backend.h"
#include "harness/adapters/adapter_spec.h"

namespace gbc {

std::unique_ptr<Backend> make_adapter_backend(const AdapterSpec& spec);

}  // namespace gbc
