// The files of a static HTML report: each page's file name (an index and the pages it links to,
// which `--html FILE` names after FILE so that several reports can share a folder), and writing
// them (each page atomically). Test: tests/report/html_report_test.cpp.
#pragma once

#include <string>
#include <vector>

namespace gbc {

struct SitePage {
  std::string file;  // relative to the site's folder
  std::string html;
};

/// How pages are named: `report DIR -o OUT/` gives index.html, graph-gbc-0.html, ...; `--html
/// run.html` gives run.html, run-graph-gbc-0.html, ...
struct SiteNames {
  std::string index = "index.html";
  std::string prefix;
  /// The file of page `name` ("index" is the index).
  std::string file(const std::string& name) const { return name == "index" ? index : prefix + name + ".html"; }
  /// Names for a site written as FILE (its folder holds the other pages; FILE index.html: no prefix).
  static SiteNames for_file(const std::string& path);
};

/// Writes every page into dir (created). Throws std::runtime_error when a page cannot be written.
void write_site(const std::vector<SitePage>& pages, const std::string& dir);
/// The folder of FILE ("." for a bare name).
std::string site_folder(const std::string& file);
/// Bytes of all pages together.
size_t site_size(const std::vector<SitePage>& pages);

}  // namespace gbc
