// Whether an external backend can run here: its adapter's probe (`COMMAND ARGS --probe MODULES...`
// prints one JSON object: protocol, python and torch versions, cuda, which of the modules exist,
// and its own `unavailable` reason) checked against the backend's `requires:` in
// configs/backends.yaml. A probe must not import torch (it runs for `gbcheck backends` on every
// backend), so it answers within a second. Results are cached per backend and process.
// Test: tests/adapters/backends_config_test.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "harness/adapters/adapter_spec.h"

namespace gbc {

/// "" when the backend can run; otherwise why not ("needs torch >= 2.0, found 1.13.0a0").
std::string adapter_unavailable_reason(const AdapterSpec& spec);

/// The reason from a probe's answer and the requirements ("" = available). Pure.
std::string unavailable_reason(const AdapterRequirements& requires, const nlohmann::json& probe);

/// -1, 0 or 1 comparing dotted versions by their leading numbers ("1.13.0a0" < "2.0").
int compare_versions(const std::string& a, const std::string& b);

}  // namespace gbc
