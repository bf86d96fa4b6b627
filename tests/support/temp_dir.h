// A fresh folder for one test, removed with everything in it when the test ends, and files
// written into it in one call. Used by tests/fuzz/fuzz_config_test.cpp and
// tests/cli/config_flags_test.cpp.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "compiler/support/file_tree.h"

namespace gbc::testing {

class TempDir {
 public:
  /// temp_directory_path()/gbcheck-NAME-PID, empty.
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / ("gbcheck-" + name + "-" + std::to_string(::getpid()))) {
    std::error_code ignored;
    remove_tree(path_.string(), ignored);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    remove_tree(path_.string(), ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  /// The path of `name` in the folder (not created).
  std::string path(const std::string& name) const { return (path_ / name).string(); }
  /// Writes `text` to `name` in the folder; returns its path.
  std::string file(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }
  const std::filesystem::path& root() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace gbc::testing
