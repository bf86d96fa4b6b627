#include "harness/report/site_files.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace gbc {

SiteNames SiteNames::for_file(const std::string& path) {
  const std::filesystem::path p(path);
  SiteNames n;
  n.index = p.filename().string();
  if (n.index != "index.html") n.prefix = p.stem().string() + "-";  // index.html: a folder of its own
  return n;
}

std::string site_folder(const std::string& file) {
  const std::filesystem::path parent = std::filesystem::path(file).parent_path();
  return parent.empty() ? "." : parent.string();
}

void write_site(const std::vector<SitePage>& pages, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (const SitePage& page : pages) {
    const std::string path = (std::filesystem::path(dir) / page.file).string();
    const std::string tmp = path + ".tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << page.html;
      if (!out) throw std::runtime_error("cannot write " + path);
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot write " + path);
  }
}

size_t site_size(const std::vector<SitePage>& pages) {
  size_t n = 0;
  for (const SitePage& p : pages) n += p.html.size();
  return n;
}

}  // namespace gbc
