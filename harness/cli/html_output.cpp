#include "harness/cli/html_output.h"

#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "compiler/support/file_tree.h"
#include "compiler/support/trace.h"
#include "harness/cli/cli.h"
#include "harness/report/trace_site.h"

namespace gbc {

std::string render_trace_site(const std::string& trace_dir, const std::string& index_path, int exit_code) {
  try {
    Trace t = read_trace(trace_dir);
    if (exit_code >= 0 && !t.finished) t.finished = true, t.exit_code = exit_code;  // the command is ending now
    write_site(trace_site(t, SiteNames::for_file(index_path), default_docs_dir()), site_folder(index_path));
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

HtmlOutput::~HtmlOutput() {
  if (temp_trace_.empty()) return;
  trace::close(0);
  std::error_code ignored;
  remove_tree(temp_trace_, ignored);
}

bool HtmlOutput::begin() {
  if (html_path_.empty() || trace::enabled()) return true;
  temp_trace_ = (std::filesystem::temp_directory_path() / ("gbcheck-html-trace-" + std::to_string(::getpid()))).string();
  if (std::string why = trace::open(temp_trace_, invoked_command_line()); !why.empty()) {
    std::cerr << "gbcheck: --html: " << why << "\n";
    temp_trace_.clear();
    return false;
  }
  ::unsetenv(trace::kEnvVar);  // a temporary trace is this process's alone
  return true;
}

bool HtmlOutput::write(int exit_code, bool quiet) {
  if (html_path_.empty()) return true;
  if (std::string why = render_trace_site(trace::directory(), html_path_, exit_code); !why.empty()) {
    std::cerr << "gbcheck: --html: " << why << "\n";
    return false;
  }
  if (!quiet) std::cout << "report: " << html_path_ << "\n";
  return true;
}

}  // namespace gbc
