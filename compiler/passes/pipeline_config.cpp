#include "compiler/passes/pipeline_config.h"

#include <algorithm>

#include "compiler/ir/config_keys.h"
#include "compiler/ir/op_schema.h"

namespace gbc {
namespace {

struct PipelineConfig {
  std::vector<std::string> graph_passes;
};

std::vector<ConfigProblem> pipeline_problems(const PipelineConfig& c, const std::vector<std::string>& known) {
  std::vector<ConfigProblem> out;
  std::string known_list;
  for (const auto& k : known) known_list += (known_list.empty() ? "" : ", ") + k;
  for (size_t i = 0; i < c.graph_passes.size(); ++i) {
    const std::string& name = c.graph_passes[i];
    const std::vector<std::string> keys = {"graph_passes." + std::to_string(i)};
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string close = closest_name(name, known);
      out.push_back({keys, "graph_passes names unknown graph pass '" + name + "' (" +
                               (close.empty() ? "" : "did you mean '" + close + "'? ") + "graph passes: " + known_list + ")"});
    } else if (std::find(c.graph_passes.begin(), c.graph_passes.begin() + static_cast<std::ptrdiff_t>(i), name) !=
               c.graph_passes.begin() + static_cast<std::ptrdiff_t>(i)) {
      out.push_back({keys, "graph_passes lists '" + name + "' twice: a pass runs once per pipeline"});
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> read_pipeline_config(const std::string& text, const std::string& path,
                                              const std::vector<std::string>& known) {
  const ConfigFormat<PipelineConfig> format = {
      "pipeline config",
      "list the graph passes in the order they run, as configs/pipeline.yaml does (docs/configs.md)",
      {name_list_key("graph_passes", &PipelineConfig::graph_passes)},
      [&known](ConfigRead& in, const PipelineConfig& c) { report_config_problems(in, "", pipeline_problems(c, known)); }};
  PipelineConfig config;
  read_config(text, path, format, true, config);
  return config.graph_passes;
}

std::vector<std::string> load_pipeline_config(const std::string& path, const std::vector<std::string>& known) {
  return read_pipeline_config(read_config_file(path), path, known);
}

}  // namespace gbc
