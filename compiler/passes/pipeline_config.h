// Reads configs/pipeline.yaml: the graph passes gbc runs on each graph, in order, by the names
// --disable-pass takes (docs/configs.md). The passes themselves are code (pass_manager.h holds
// the registry); the order is data, as a reducer's schedule is. Test:
// tests/passes/pass_manager_test.cpp; its error messages are pinned in corpus/config-errors/pipeline/.
#pragma once

#include <string>
#include <vector>

namespace gbc {

/// The pass names a pipeline file lists, in order. `known` are the graph passes that exist. Throws
/// ConfigError naming file:line:col for invalid YAML, an unknown key, a value of the wrong type, a
/// name that is not in `known` or a name listed twice.
std::vector<std::string> read_pipeline_config(const std::string& text, const std::string& path,
                                              const std::vector<std::string>& known);

/// read_pipeline_config on a file; ConfigError when it cannot be read.
std::vector<std::string> load_pipeline_config(const std::string& path, const std::vector<std::string>& known);

}  // namespace gbc
