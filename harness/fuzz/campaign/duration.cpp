#include "harness/fuzz/campaign/duration.h"

#include <cctype>
#include <stdexcept>

namespace gbc {

double parse_duration(const std::string& text) {
  auto fail = [&] {
    throw std::invalid_argument("not a duration: '" + text + "' (use 8h, 90m, 1h30m, 45s or seconds)");
  };
  if (text.empty()) fail();
  double total = 0;
  size_t i = 0;
  char last_unit = 0;
  while (i < text.size()) {
    size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    std::string number = text.substr(start, i - start);
    size_t dots = number.find('.') == std::string::npos ? 0 : 1 + (number.find('.', number.find('.') + 1) != std::string::npos);
    if (number.empty() || number.size() > 12 || dots > 1 || number == ".") fail();
    double value = std::stod(number);
    if (i == text.size()) {
      if (start != 0) fail();  // "1h30" is ambiguous
      total = value;
      break;
    }
    char unit = text[i++];
    double scale = unit == 'h' ? 3600 : unit == 'm' ? 60 : unit == 's' ? 1 : 0;
    // Units in decreasing order, each once.
    bool order_ok = last_unit == 0 || (last_unit == 'h' && unit != 'h') || (last_unit == 'm' && unit == 's');
    if (scale == 0 || !order_ok) fail();
    last_unit = unit;
    total += value * scale;
  }
  if (!(total > 0)) fail();
  return total;
}

}  // namespace gbc
