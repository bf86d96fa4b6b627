// The python that runs the Python adapters ({python} in configs/backends.yaml).
#pragma once

#include <string>
#include <vector>

namespace gbc {

/// $GBCHECK_PYTHON when set; else the `python3` found on PATH when it can import torch (an active
/// virtual environment or conda, where a user's own PyTorch lives); else /usr/bin/python3
/// (Debian's python3-torch). Decided once per process. Tests: tests/adapters/adapter_python_test.cpp.
std::string adapter_python();

/// `command` with every {python} replaced by adapter_python() (configs/backends.yaml's placeholder,
/// resolved when an adapter starts).
std::vector<std::string> with_adapter_python(std::vector<std::string> command);

/// The PATH lookup and the torch test of adapter_python(), without the environment variable and
/// without caching: `path` is a PATH value.
std::string choose_adapter_python(const std::string& path, const std::string& system_python = "/usr/bin/python3");

}  // namespace gbc
