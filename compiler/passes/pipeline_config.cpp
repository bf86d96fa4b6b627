#include "compiler/passes/pipeline_config.h"

#include <algorithm>

#include "compiler/ir/op_schema.h"
#include "compiler/ir/yaml_reader.h"

namespace gbc {

std::vector<std::string> read_pipeline_config(const std::string& text, const std::string& path,
                                              const std::vector<std::string>& known) {
  Diagnostics diags;
  YamlReader r(path, diags);
  std::vector<std::string> names;
  if (std::optional<YAML::Node> root = r.parse_config(text, {"graph_passes"}, "pipeline config")) {
    const YAML::Node list = (*root)["graph_passes"];
    std::string known_list;
    for (const auto& k : known) known_list += (known_list.empty() ? "" : ", ") + k;
    if (!list) {
      diags.error(SourceLoc{path, 1, 1}, "pipeline config: missing graph_passes",
                  "list the graph passes in the order they run: graph_passes: [" + known_list + "]");
    } else if (r.expect_sequence(list, "graph_passes")) {
      for (const YAML::Node& item : list) {
        std::optional<std::string> name = r.read_string(item, "graph_passes entry");
        if (!name) continue;
        if (std::find(known.begin(), known.end(), *name) == known.end()) {
          std::string close = closest_name(*name, known);
          r.error(item, "unknown graph pass '" + *name + "'",
                  (close.empty() ? "" : "did you mean '" + close + "'? ") + "graph passes: " + known_list);
        } else if (std::find(names.begin(), names.end(), *name) != names.end()) {
          r.error(item, "graph pass '" + *name + "' is listed twice", "a pass runs once per pipeline: remove one");
        } else {
          names.push_back(*name);
        }
      }
    }
  }
  if (diags.has_errors()) throw ConfigError(diags);
  return names;
}

std::vector<std::string> load_pipeline_config(const std::string& path, const std::vector<std::string>& known) {
  return read_pipeline_config(read_config_file(path), path, known);
}

}  // namespace gbc
