// The executable paths the harness can name, created by name from backend_registry.cpp: the eager
// reference, gbc's ladder (trace, decomp, gbc-interp, gbc) and compilers nobody here wrote (nnc,
// torch.compile). Each implements the Backend interface of compiler/runtime/backend_interface.h.
// Tests: tests/runtime/backends_test.cpp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compiler/runtime/backend_interface.h"

namespace gbc {

struct BackendInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Backend>()> create;
  bool compiled = true;  // false for the eager reference
};

/// Every backend, in the order of the ladder from eager to fully compiled.
const std::vector<BackendInfo>& backend_registry();
/// nullptr for an unknown name.
std::unique_ptr<Backend> make_backend(const std::string& name);
const BackendInfo* find_backend(const std::string& name);

}  // namespace gbc
