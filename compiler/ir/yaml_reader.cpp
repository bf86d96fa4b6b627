#include "compiler/ir/yaml_reader.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "compiler/ir/op_schema.h"

namespace gbc {
namespace {

std::string kind_str(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a map";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "'" + n.Scalar() + "'";
    case YAML::NodeType::Null: return "nothing";
    default: return "nothing";
  }
}

}  // namespace

SourceLoc YamlReader::loc(const YAML::Node& node) const {
  SourceLoc l;
  l.file = file_;
  if (node.IsDefined()) {
    YAML::Mark m = node.Mark();
    if (m.line >= 0) {
      l.line = m.line + 1;
      l.col = m.column + 1;
    }
  }
  return l;
}

bool YamlReader::expect_map(const YAML::Node& node, const std::string& what) {
  if (node.IsMap()) return true;
  error(node, what + " must be a map, got " + kind_str(node), "write it as `key: value` lines or {key: value, ...}");
  return false;
}

bool YamlReader::expect_sequence(const YAML::Node& node, const std::string& what) {
  if (node.IsSequence()) return true;
  error(node, what + " must be a list, got " + kind_str(node), "write it as [a, b] or as `- item` lines");
  return false;
}

void YamlReader::check_keys(const YAML::Node& map, const std::vector<std::string>& allowed, const std::string& context) {
  std::set<std::string> seen;
  for (auto it = map.begin(); it != map.end(); ++it) {
    const YAML::Node key = it->first;  // a copy: it-> yields a temporary proxy
    std::string k = key.IsScalar() ? key.Scalar() : "";
    if (!seen.insert(k).second) {
      error(key, context + ": key '" + k + "' is given twice", "remove one of them");
      continue;
    }
    bool known = false;
    for (const auto& a : allowed) known = known || a == k;
    if (known) continue;
    std::string close = closest_name(k, allowed);
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    error(key, context + ": unknown key '" + k + "'",
          close.empty() ? "known keys: " + list : "did you mean '" + close + "'? known keys: " + list);
  }
}

YAML::Node YamlReader::key_node(const YAML::Node& map, const std::string& key) const {
  for (auto it = map.begin(); it != map.end(); ++it)
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->first;
  return YAML::Node();
}

std::optional<YAML::Node> YamlReader::parse(const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    diags_.error(SourceLoc{file_, e.mark.line + 1, e.mark.column + 1}, "invalid YAML: " + e.msg,
                 "check indentation, brackets and quotes around this position");
    return std::nullopt;
  }
}

std::optional<Scalar> YamlReader::parse_number(const YAML::Node& node) {
  if (!node.IsScalar() || node.Tag() == "!") return std::nullopt;  // quoted: a string
  const std::string& s = node.Scalar();
  if (s == "true" || s == "True") return Scalar::from_bool(true);
  if (s == "false" || s == "False") return Scalar::from_bool(false);
  std::string lower;
  for (char c : s) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "nan" || lower == ".nan") return Scalar::from_float(std::numeric_limits<double>::quiet_NaN());
  if (lower == "inf" || lower == ".inf" || lower == "+inf" || lower == "+.inf") return Scalar::from_float(INFINITY);
  if (lower == "-inf" || lower == "-.inf") return Scalar::from_float(-INFINITY);
  if (s.empty()) return std::nullopt;
  const char* begin = s.c_str();
  char* end = nullptr;
  bool looks_float = s.find_first_of(".eE") != std::string::npos;
  if (!looks_float) {
    errno = 0;
    long long v = std::strtoll(begin, &end, 10);
    if (end && *end == '\0' && errno == 0) return Scalar::from_int(v);
  }
  double d = std::strtod(begin, &end);
  if (end && *end == '\0' && end != begin) return Scalar::from_float(d);
  return std::nullopt;
}

bool YamlReader::is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::optional<int64_t> YamlReader::read_int(const YAML::Node& node, const std::string& what) {
  auto n = parse_number(node);
  if (n && n->kind == ScalarKind::Int) return n->i;
  error(node, what + " must be an integer, got " + kind_str(node));
  return std::nullopt;
}

std::optional<double> YamlReader::read_float(const YAML::Node& node, const std::string& what) {
  auto n = parse_number(node);
  if (n && n->kind != ScalarKind::Bool) return n->to_double();
  error(node, what + " must be a number, got " + kind_str(node));
  return std::nullopt;
}

std::optional<bool> YamlReader::read_bool(const YAML::Node& node, const std::string& what) {
  auto n = parse_number(node);
  if (n && n->kind == ScalarKind::Bool) return n->b;
  error(node, what + " must be true or false, got " + kind_str(node));
  return std::nullopt;
}

std::optional<std::string> YamlReader::read_string(const YAML::Node& node, const std::string& what) {
  if (node.IsScalar()) return node.Scalar();
  error(node, what + " must be a string, got " + kind_str(node));
  return std::nullopt;
}

std::optional<std::vector<int64_t>> YamlReader::read_int_list(const YAML::Node& node, const std::string& what) {
  if (node.IsScalar()) {
    auto v = read_int(node, what);
    if (!v) return std::nullopt;
    return std::vector<int64_t>{*v};
  }
  if (!expect_sequence(node, what)) return std::nullopt;
  std::vector<int64_t> out;
  bool ok = true;
  for (const auto& item : node) {
    auto v = read_int(item, what + " entry");
    if (v) out.push_back(*v);
    else ok = false;
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::vector<std::string>> YamlReader::read_string_list(const YAML::Node& node, const std::string& what) {
  if (node.IsScalar()) return std::vector<std::string>{node.Scalar()};
  if (!expect_sequence(node, what)) return std::nullopt;
  std::vector<std::string> out;
  for (const auto& item : node) {
    auto s = read_string(item, what + " entry");
    if (!s) return std::nullopt;
    out.push_back(*s);
  }
  return out;
}

std::optional<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string read_config_file(const std::string& path) {
  std::optional<std::string> text = read_text_file(path);
  if (text) return *text;
  Diagnostics d;
  d.error(SourceLoc{path, 0, 0}, "cannot read the config file", "check the path");
  throw ConfigError(d);
}

}  // namespace gbc
