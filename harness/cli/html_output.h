// `--html FILE` on check and explain: the run is traced (into --trace DIR, or a temporary folder
// removed afterwards) and rendered as the HTML report (harness/report/trace_site.h) when the command
// ends. Also what `gbcheck report DIR -o OUT/` runs. Test: tests/report/html_report_test.cpp.
#pragma once

#include <string>

namespace gbc {

class HtmlOutput {
 public:
  /// html_path "" means no --html; a trace is then left as the options set it.
  explicit HtmlOutput(std::string html_path) : html_path_(std::move(html_path)) {}
  ~HtmlOutput();
  HtmlOutput(const HtmlOutput&) = delete;
  HtmlOutput& operator=(const HtmlOutput&) = delete;

  /// After the trace options were applied: starts a temporary trace when --html needs one.
  /// Returns false after printing why when it cannot.
  bool begin();
  /// Renders the trace so far into FILE (and the pages beside it) as a run that ended with
  /// exit_code; prints the path unless quiet. Returns false after printing why when it cannot.
  bool write(int exit_code, bool quiet);

 private:
  std::string html_path_;
  std::string temp_trace_;  // the temporary trace folder, "" when --trace was given
};

/// Renders the trace in trace_dir into the site whose index is index_path. Returns "" or why not.
std::string render_trace_site(const std::string& trace_dir, const std::string& index_path, int exit_code = -1);

}  // namespace gbc
