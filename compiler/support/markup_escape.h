// Text made safe for HTML (the report pages, harness/report/html_page.h) and for XML (the JUnit
// file of a fuzz store, harness/store/store_report.cpp): one escape, whose XML mode follows XML
// 1.0's rules. Test: tests/report/html_report_test.cpp.
#pragma once

#include <string>

namespace gbc {

enum class Markup {
  Html,  // ' as &#39; (HTML 4 has no &apos;)
  Xml,   // ' as &apos;, and the control characters XML 1.0 forbids even escaped as '?'
};

/// Escapes &, <, >, " and ' for text and attribute values of `markup`.
std::string markup_escape(const std::string& text, Markup markup);

}  // namespace gbc
