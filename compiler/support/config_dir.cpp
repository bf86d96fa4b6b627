#include "compiler/support/config_dir.h"

#include <cstdlib>
#include <filesystem>

namespace gbc {

std::string config_dir() {
  if (const char* dir = std::getenv("GBCHECK_CONFIG_DIR"); dir && *dir) return dir;
  return GBCHECK_SOURCE_CONFIG_DIR;
}

std::string config_file(const std::string& name) {
  const std::string dir = config_dir();
  const std::string path = dir + "/" + name;
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) return path;
  const bool from_env = std::getenv("GBCHECK_CONFIG_DIR") && *std::getenv("GBCHECK_CONFIG_DIR");
  throw ConfigNotFound("config file " + path + " not found (" +
                       (from_env ? std::string("GBCHECK_CONFIG_DIR is ") + dir
                                 : "the configs/ folder of the source tree gbcheck was built from") +
                       "); set GBCHECK_CONFIG_DIR to a folder holding fuzz.yaml, reduce.yaml, pipeline.yaml, tolerances.yaml "
                       "(a copy of configs/)");
}

}  // namespace gbc
