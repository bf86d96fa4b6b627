// The models of a folder, for the commands that take one in place of a model file
// (`gbcheck check DIR`, `gbcheck bench DIR`): its `*.yaml` files, not those of subfolders, sorted
// by name so that every run goes through them in the same order.
// Test: tests/cli/check_models_test.cpp, tests/cli/bench_command_test.cpp.
#pragma once

#include <string>
#include <vector>

namespace gbc {

/// The `*.yaml` files directly in `folder`, sorted, each as `folder/NAME.yaml`.
std::vector<std::string> models_in_folder(const std::string& folder);

}  // namespace gbc
