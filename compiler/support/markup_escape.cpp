#include "compiler/support/markup_escape.h"

namespace gbc {

std::string markup_escape(const std::string& text, Markup markup) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += markup == Markup::Xml ? "&apos;" : "&#39;"; break;
      default:
        // XML 1.0 forbids most control characters, even escaped.
        if (markup == Markup::Xml && static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') out += '?';
        else out += c;
    }
  }
  return out;
}

}  // namespace gbc
