// Runs a shell command line for tests of gbcheck's executables (bin/gbcheck, bin/gbcheck-gen):
// its exit code and what it wrote to stdout and stderr together. Used by
// tests/fuzz/fuzz_config_test.cpp, tests/cli/config_flags_test.cpp and tests/cli/new_user_test.cpp.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace gbc::testing {

struct CommandResult {
  int exit_code = -1;  // -1 when the command did not exit normally
  std::string output;  // stdout and stderr, interleaved as written
};

/// Runs `command` with `sh -c`, stderr sent to stdout.
inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) r.output.append(buf, n);
  const int status = pclose(p);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

/// The path of an executable gbcheck builds ("gbcheck", "gbcheck-gen").
inline std::string built_binary(const std::string& name) { return std::string(GBCHECK_BINARY_DIR) + "/bin/" + name; }

/// Runs `gbcheck ARGS` from the source tree, so that paths in its messages read as a user types
/// them; `env` is prepended (`NAME=value ...`).
inline CommandResult run_gbcheck_in_source_tree(const std::string& args, const std::string& env = "") {
  return run_command("cd " + std::string(GBCHECK_SOURCE_DIR) + " && " + env + " " + built_binary("gbcheck") + " " + args);
}

}  // namespace gbc::testing
