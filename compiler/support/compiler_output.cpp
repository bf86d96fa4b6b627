#include "compiler/support/compiler_output.h"

#include <sstream>

namespace gbc {

std::string first_error_line(const std::string& compiler_output) {
  std::istringstream lines(compiler_output);
  std::string line, first;
  while (std::getline(lines, line)) {
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (first.empty()) first = line;
    if (line.find("error") != std::string::npos) return line;
  }
  return first.empty() ? "the compiler failed without output" : first;
}

}  // namespace gbc
