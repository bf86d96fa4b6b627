// What a fallback message quotes from a compiler's output (the host C++ compiler, NVRTC, the PTX
// JIT): the line a user needs first. Used by gbc's CPU and CUDA module compilers for FB001.
// Test: tests/runtime/backends_test.cpp (Fallbacks).
#pragma once

#include <string>

namespace gbc {

/// The first line naming an error, else the first non-empty line, else a sentence saying there
/// was no output.
std::string first_error_line(const std::string& compiler_output);

}  // namespace gbc
