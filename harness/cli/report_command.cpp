// `gbcheck report DIR -o OUT/`: renders a trace folder (written by --trace DIR or
// $GBCHECK_TRACE_DIR) as a static HTML site, OUT/index.html and the pages it links to
// (harness/report/trace_site.h). A trace that a kill cut short renders too, saying so.
// Exit codes: 0 written, 2 no readable trace or OUT not writable. Docs: docs/report.md.
// Test: tests/report/html_report_test.cpp.
#include <filesystem>
#include <iostream>

#include "harness/cli/cli.h"
#include "harness/cli/html_output.h"
#include "harness/runner/check_report.h"

namespace gbc {

std::function<int()> add_report_command(CLI::App& sub) {
  struct Args {
    std::string trace_dir;
    std::string out_dir = "report";
  };
  auto a = std::make_shared<Args>();
  sub.add_option("trace", a->trace_dir, "a trace folder (--trace DIR)")->required();
  sub.add_option("--out,-o", a->out_dir, "where to write index.html and its pages")->capture_default_str();
  return [a]() -> int {
    const std::string index = (std::filesystem::path(a->out_dir) / "index.html").string();
    if (std::string why = render_trace_site(a->trace_dir, index); !why.empty()) {
      std::cerr << "gbcheck report: " << why << "\n";
      return kExitInvalid;
    }
    std::cout << "report: " << index << "\n";
    return kExitPass;
  };
}

}  // namespace gbc
