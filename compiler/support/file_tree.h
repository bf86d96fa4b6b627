// Removing a folder with everything in it, without std::filesystem::remove_all: the pip wheels of
// LibTorch 2.x export a copy of that function which the dynamic linker binds our calls to in any
// program that links torch, and that copy jumps to a null pointer (seen with torch 2.11: every
// compile of gbc's CPU backend crashed in it). POSIX nftw does the walk instead.
// Test: tests/codegen/cpu_compiler_test.cpp (RemoveTree).
#pragma once

#include <cstdint>
#include <string>
#include <system_error>

namespace gbc {

/// Removes `path` (a file, a link, or a folder and everything below it; links are removed, never
/// followed). Returns how many entries went; a missing path removes nothing and is no error. On
/// failure ec says why and what could be removed is gone.
uintmax_t remove_tree(const std::string& path, std::error_code& ec);

}  // namespace gbc
