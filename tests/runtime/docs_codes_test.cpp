// docs/graph-breaks.md against the sources: every event code a compiler emits ("GB001", "FB101",
// "RC002", ... as string literals under compiler/) has a `## CODE: title` section, and every
// section names a code some source still emits.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace gbc {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::set<std::string> codes_in_sources() {
  const std::regex literal("\"((GB|FB|RC)[0-9]{3})\"");
  std::set<std::string> codes;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(GBCHECK_SOURCE_DIR) / "compiler")) {
    const std::string ext = e.path().extension().string();
    if (ext != ".cpp" && ext != ".h" && ext != ".cu") continue;
    const std::string text = read(e.path());
    for (std::sregex_iterator it(text.begin(), text.end(), literal), end; it != end; ++it) codes.insert((*it)[1]);
  }
  return codes;
}

std::set<std::string> codes_in_doc() {
  const std::regex heading("(^|\n)## ((GB|FB|RC)[0-9]{3}): ");
  const std::string text = read(fs::path(GBCHECK_SOURCE_DIR) / "docs/graph-breaks.md");
  std::set<std::string> codes;
  for (std::sregex_iterator it(text.begin(), text.end(), heading), end; it != end; ++it) codes.insert((*it)[2]);
  return codes;
}

TEST(DocsCodes, EverySourceCodeHasASection) {
  const std::set<std::string> source = codes_in_sources();
  const std::set<std::string> doc = codes_in_doc();
  // The runtime's own codes must be found, or the scan itself is broken.
  for (const char* code : {"GB001", "GB006", "FB001", "FB002", "RC001"}) EXPECT_TRUE(source.count(code)) << code;
  for (const std::string& code : source) EXPECT_TRUE(doc.count(code)) << code << " has no section in docs/graph-breaks.md";
}

TEST(DocsCodes, EverySectionNamesAnEmittedCode) {
  const std::set<std::string> source = codes_in_sources();
  for (const std::string& code : codes_in_doc())
    EXPECT_TRUE(source.count(code)) << "docs/graph-breaks.md documents " << code << ", which no source emits";
}

}  // namespace
}  // namespace gbc
