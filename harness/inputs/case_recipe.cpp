#include "harness/inputs/case_recipe.h"

#include <cctype>
#include <climits>

namespace gbc {

const char* layout_name(Layout layout) {
  switch (layout) {
    case Layout::Contiguous: return "contiguous";
    case Layout::Transposed: return "transposed";
    case Layout::Sliced: return "sliced";
    case Layout::Expanded: return "expanded";
  }
  return "?";
}

std::string ShrinkPath::str() const {
  std::string s;
  for (size_t i = 0; i < steps.size(); ++i) s += (i ? "." : "") + std::to_string(steps[i]);
  return s;
}

std::optional<ShrinkPath> ShrinkPath::parse(const std::string& text) {
  ShrinkPath p;
  if (text.empty()) return p;
  long long cur = -1;
  for (char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      cur = (cur < 0 ? 0 : cur) * 10 + (c - '0');
      if (cur > INT_MAX) return std::nullopt;
    } else if (c == '.' && cur >= 0) {
      p.steps.push_back(static_cast<int>(cur));
      cur = -1;
    } else {
      return std::nullopt;
    }
  }
  if (cur < 0) return std::nullopt;
  p.steps.push_back(static_cast<int>(cur));
  return p;
}

}  // namespace gbc
