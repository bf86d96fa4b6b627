// `gbcheck ops --markdown` against docs/model-format.md: the table between the ops-table markers
// is exactly what the command prints, so the documented ops follow the schema table
// (compiler/ir/op_schema.cpp). After changing an op, paste the command's output between them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "harness/cli/cli.h"

namespace gbc {
namespace {

// What `gbcheck ARGS...` writes to stdout, and its exit code.
int gbcheck(std::vector<std::string> args, std::string& out) {
  args.insert(args.begin(), "gbcheck");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream captured;
  std::streambuf* saved = std::cout.rdbuf(captured.rdbuf());
  const int rc = cli_main(static_cast<int>(argv.size()), argv.data());
  std::cout.rdbuf(saved);
  out = captured.str();
  return rc;
}

TEST(OpsCommand, MarkdownTableIsTheOneInTheModelFormatDocs) {
  std::ifstream in(std::filesystem::path(GBCHECK_SOURCE_DIR) / "docs" / "model-format.md");
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  const std::string begin = "<!-- ops-table:begin -->\n", end = "<!-- ops-table:end -->";
  const size_t from = text.find(begin), to = text.find(end);
  ASSERT_NE(from, std::string::npos) << "docs/model-format.md lost its ops-table:begin marker";
  ASSERT_NE(to, std::string::npos) << "docs/model-format.md lost its ops-table:end marker";
  ASSERT_LT(from, to);
  const std::string documented = text.substr(from + begin.size(), to - from - begin.size());

  std::string printed;
  ASSERT_EQ(gbcheck({"ops", "--markdown"}, printed), 0);
  EXPECT_NE(printed.find("| `matmul` |"), std::string::npos) << printed;
  EXPECT_EQ(printed, documented) << "regenerate docs/model-format.md's op table with `gbcheck ops --markdown`";
}

}  // namespace
}  // namespace gbc
