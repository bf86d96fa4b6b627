#include "harness/fuzz/campaign/shard.h"

#include <cctype>
#include <stdexcept>

namespace gbc {

Shard Shard::parse(const std::string& text) {
  auto fail = [&] {
    throw std::invalid_argument("--shard takes i/N with 0 <= i < N (shard 0 of 4 is 0/4), got '" + text + "'");
  };
  size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size() || slash > 9 || text.size() - slash > 10) fail();
  for (size_t i = 0; i < text.size(); ++i)
    if (i != slash && !std::isdigit(static_cast<unsigned char>(text[i]))) fail();
  Shard s;
  s.index = std::stoi(text.substr(0, slash));
  s.count = std::stoi(text.substr(slash + 1));
  if (s.count < 1 || s.index >= s.count) fail();
  return s;
}

}  // namespace gbc
