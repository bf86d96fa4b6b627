// configs/backends.yaml and the files that extend it (--backends-config FILE, and
// $GBCHECK_BACKENDS_CONFIG, a colon-separated list): external backends by name, each an adapter
// command with its limits and requirements (docs/configs.md#backendsyaml, docs/adapters.md).
// Read with the config reader of configs/ (compiler/ir/config_keys.h), so every problem is
// reported at its file:line:col (ConfigError, exit code 2). In `command` and `args`, {here} is the
// folder of the file that says it and {python} is $GBCHECK_PYTHON, else /usr/bin/python3.
// Test: tests/adapters/backends_config_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "harness/adapters/adapter_spec.h"

namespace gbc {

/// The adapters `text` (the file at `path`) defines, in file order. Throws ConfigError.
std::vector<AdapterSpec> read_backends_config(const std::string& text, const std::string& path);

/// configs/backends.yaml, then each file of $GBCHECK_BACKENDS_CONFIG, then `extra_file` (when not
/// empty): a later definition of a name replaces the earlier one. Throws ConfigNotFound when
/// configs/backends.yaml is missing, ConfigError for an invalid file.
std::vector<AdapterSpec> load_backends_config(const std::string& extra_file = "");

/// Loads them (load_backends_config) and registers each as a backend (register_backend), with
/// its availability from the adapter's probe (adapter_probe.h). Once per process and file.
void register_external_backends(const std::string& extra_file = "");

/// The spec of a backend that register_external_backends() registered; nullptr for others.
const AdapterSpec* registered_adapter(const std::string& name);

}  // namespace gbc
