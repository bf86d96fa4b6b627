#include "compiler/ir/config_keys.h"

#include <charconv>

namespace gbc {

std::string config_number_text(double v) {
  char buf[64];
  auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
  return std::string(buf, end);
}

std::string config_quoted(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) out += ch == '"' || ch == '\\' ? std::string("\\") + ch : std::string(1, ch);
  return out + "\"";
}

void read_config_text(const std::string& text, const std::string& path,
                      const std::function<void(YamlReader& reader, const YAML::Node& root)>& read) {
  Diagnostics diags;
  YamlReader r(path, diags);
  if (std::optional<YAML::Node> root = r.parse(text)) read(r, root->IsNull() ? YAML::Node(YAML::NodeType::Map) : *root);
  if (diags.has_errors()) {
    diags.sort_by_location();
    throw ConfigError(diags);
  }
}

void report_config_problems(ConfigRead& in, const std::string& prefix, const std::vector<ConfigProblem>& problems) {
  for (const ConfigProblem& p : problems) {
    // The defaults are valid on their own: a problem comes from a key this read set.
    SourceLoc at{in.reader.file(), 0, 0};
    for (const std::string& key : p.keys) {
      const std::string top = prefix + key.substr(0, key.find('.'));
      if (!in.here.count(top)) continue;
      auto it = in.locs.find(prefix + key);
      at = it != in.locs.end() ? it->second : in.locs.at(top);
      break;
    }
    in.reader.diags().error(at, prefix + p.message);
  }
}

}  // namespace gbc
