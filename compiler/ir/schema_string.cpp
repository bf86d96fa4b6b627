#include "compiler/ir/schema_string.h"

#include <stdexcept>

namespace gbc {
namespace {

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// Splits at the commas outside brackets, parentheses and string literals.
std::vector<std::string> split_top_level(const std::string& s) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  char quote = 0;
  for (char c : s) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(trim(cur));
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (!trim(cur).empty()) parts.push_back(trim(cur));
  return parts;
}

// "Tensor(a!)" -> "Tensor": alias annotations say what aliases, not what the type is.
std::string without_annotations(const std::string& type) {
  std::string out;
  int depth = 0;
  for (char c : type) {
    if (c == '(') ++depth;
    else if (c == ')') --depth;
    else if (depth == 0) out += c;
  }
  return out;
}

// "int[2] stride=[]" -> type, name, default; a return may have no name ("Tensor").
void read_declaration(const std::string& text, std::string& type, std::string& name, bool& has_default) {
  std::string decl = text;
  has_default = false;
  int depth = 0;
  for (size_t i = 0; i < decl.size(); ++i) {
    if (decl[i] == '(' || decl[i] == '[') ++depth;
    else if (decl[i] == ')' || decl[i] == ']') --depth;
    else if (decl[i] == '=' && depth == 0) {
      has_default = true;
      decl = trim(decl.substr(0, i));
      break;
    }
  }
  const std::string bare = without_annotations(decl);
  const size_t space = bare.find_last_of(' ');
  type = trim(space == std::string::npos ? bare : bare.substr(0, space));
  name = space == std::string::npos ? "" : trim(bare.substr(space + 1));
}

}  // namespace

SchemaSignature parse_schema_string(const std::string& schema) {
  const size_t open = schema.find('(');
  const size_t arrow = schema.rfind("->");
  const size_t close = arrow == std::string::npos ? std::string::npos : schema.rfind(')', arrow);
  if (open == std::string::npos || close == std::string::npos || close < open)
    throw std::invalid_argument("not an ATen schema: '" + schema + "'");
  SchemaSignature sig;
  sig.name = trim(schema.substr(0, open));
  bool keyword_only = false;
  for (const std::string& part : split_top_level(schema.substr(open + 1, close - open - 1))) {
    if (part == "*") {
      keyword_only = true;
      continue;
    }
    SchemaArgument a;
    read_declaration(part, a.type, a.name, a.has_default);
    a.keyword_only = keyword_only;
    sig.arguments.push_back(a);
  }
  std::string returns = trim(schema.substr(arrow + 2));
  if (returns.size() >= 2 && returns.front() == '(' && returns.back() == ')') returns = returns.substr(1, returns.size() - 2);
  for (const std::string& part : split_top_level(returns)) {
    std::string type, name;
    bool has_default = false;
    read_declaration(part, type, name, has_default);
    sig.returns.push_back(type);
  }
  return sig;
}

}  // namespace gbc
