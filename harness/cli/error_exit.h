// How an error that ends a command becomes its message and exit code (docs/cli.md, "Exit codes"):
// an invalid model or config file is 2 with its file:line:col diagnostics, a missing configs/ file
// 4, gbcheck's own bug 3. cli_main ends a command with it, and `gbcheck check A.yaml B.yaml` ends
// one model with it and goes on to the next.
// Test: tests/cli/check_models_test.cpp.
#pragma once

#include <exception>
#include <string>

namespace gbc {

struct ErrorExit {
  int exit_code = 0;
  std::string message;  // what to print on stderr, ending in a newline
};

/// The exit code and message for an error a command threw.
ErrorExit error_exit(const std::exception& error);

/// What an exit code means, in a few words ("invalid model, config or usage").
std::string exit_code_meaning(int exit_code);

}  // namespace gbc
