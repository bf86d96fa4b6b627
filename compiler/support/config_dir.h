// Where gbcheck finds the files under configs/ (fuzz.yaml, reduce.yaml, pipeline.yaml,
// tolerances.yaml, backends.yaml: what each holds is in docs/configs.md): $GBCHECK_CONFIG_DIR when set, else the configs/ folder of the
// source tree the binary was built from (a path CMake compiles in), so a built gbcheck needs no
// setup and a copied or installed one is pointed at its configs with one variable.
// Test: tests/harness/config_files_test.cpp.
#pragma once

#include <stdexcept>
#include <string>

namespace gbc {

/// A file gbcheck needs under configs/ is missing: an unusable environment (exit code 4).
class ConfigNotFound : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// $GBCHECK_CONFIG_DIR, else the source tree's configs/ (compiled in).
std::string config_dir();

/// config_dir()/name. Throws ConfigNotFound, saying where it looked and how to point gbcheck
/// elsewhere, when the file does not exist.
std::string config_file(const std::string& name);

}  // namespace gbc
