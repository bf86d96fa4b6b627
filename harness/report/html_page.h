// The pieces every HTML report page is made of: escaping (all text that reaches HTML goes through
// html_escape), a page shell with inline CSS and a small inline script (no network at view time),
// collapsible code blocks, and tables. Test: tests/report/html_report_test.cpp.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gbc::html {

/// Escapes &, <, >, " and ' for text and attribute values (markup_escape's HTML mode).
std::string escape(const std::string& text);
/// A whole page: <title>, a navigation bar of (href, label) links, then `body` (already HTML).
std::string page(const std::string& title, const std::vector<std::pair<std::string, std::string>>& nav,
                 const std::string& body);
/// <details><summary>summary</summary><pre><code class="LANG">code</code></pre></details>, escaped;
/// lang "cpp" is highlighted by the page's script.
std::string code_block(const std::string& summary, const std::string& code, const std::string& lang, bool open = false);
/// A table from a header row and rows of cells that are already HTML.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  const std::string& css_class = "");
/// <a href="href">escaped label</a>.
std::string link(const std::string& href, const std::string& label);
/// A verdict badge: PASS green, FAIL red, anything else grey.
std::string badge(const std::string& verdict);
/// A number of milliseconds as "12.3 ms" / "1.20 s".
std::string ms_text(double ms);

}  // namespace gbc::html
