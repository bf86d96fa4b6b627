// Typed reads from yaml-cpp nodes that report problems as diagnostics with file:line:col instead
// of throwing, so that one load reports every error in a file. Used by the model loader
// (harness/model) and the readers of the files under configs/ (docs/configs.md). Tested through
// tests/harness/error_corpus_test.cpp and tests/harness/config_files_test.cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace gbc {

class YamlReader {
 public:
  YamlReader(std::string file, Diagnostics& diags) : file_(std::move(file)), diags_(diags) {}

  SourceLoc loc(const YAML::Node& node) const;
  Diagnostics& diags() { return diags_; }
  const std::string& file() const { return file_; }
  void error(const YAML::Node& at, const std::string& message, const std::string& hint = "") {
    diags_.error(loc(at), message, hint);
  }

  /// Reports unless node is a map; `what` names it ("inputs", "node").
  bool expect_map(const YAML::Node& node, const std::string& what);
  bool expect_sequence(const YAML::Node& node, const std::string& what);
  /// Reports keys not in `allowed` (with a "did you mean" hint) and keys given twice.
  void check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& context);
  /// The key node for `key` in a map (for locations); a null node when absent.
  YAML::Node key_node(const YAML::Node& map, const std::string& key) const;

  std::optional<int64_t> read_int(const YAML::Node& node, const std::string& what);
  std::optional<double> read_float(const YAML::Node& node, const std::string& what);
  std::optional<bool> read_bool(const YAML::Node& node, const std::string& what);
  std::optional<std::string> read_string(const YAML::Node& node, const std::string& what);
  std::optional<std::vector<int64_t>> read_int_list(const YAML::Node& node, const std::string& what);
  std::optional<std::vector<std::string>> read_string_list(const YAML::Node& node, const std::string& what);

  /// The document in `text`; nullopt after reporting invalid YAML at its line:col.
  std::optional<YAML::Node> parse(const std::string& text);
  /// A plain scalar as a number (int, float incl. nan/inf, or bool); nullopt when it is not one.
  static std::optional<Scalar> parse_number(const YAML::Node& node);
  static bool is_identifier(const std::string& s);

 private:
  std::string file_;
  Diagnostics& diags_;
};

/// The whole content of a file; nullopt when it cannot be read.
std::optional<std::string> read_text_file(const std::string& path);
/// The text of a config file; throws ConfigError at `path` when it cannot be read.
std::string read_config_file(const std::string& path);

}  // namespace gbc
