// The HTML report of a fuzz store (`gbcheck db report DIR --html FILE`): the runs, the totals, and
// the signatures new, known (hit by the latest generation) and fixed, each with its hit count,
// first and last sighting, replay command, links to its repro folder's files (relative to FILE, so
// they resolve where the report is opened), and its reduced model drawn as a graph picture
// (graph_svg.h; graph-breaking nodes red). Docs: docs/report.md. Test: tests/report/html_report_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "harness/report/site_files.h"
#include "harness/store/store_report.h"

namespace gbc {

/// store_folder: the folder repro paths are relative to; index_path: where the index is written.
std::vector<SitePage> store_site(const StoreReport& report, const std::string& store_folder, const std::string& index_path);

}  // namespace gbc
