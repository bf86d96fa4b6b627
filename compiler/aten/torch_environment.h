// The LibTorch this process runs on, for code that only reports it or prepares it: its version,
// whether it sees a CUDA device, and making its CPU kernels single-threaded before forking. The
// header includes no LibTorch header, so the command-line files that need just this much compile
// without LibTorch's headers (cmake/torch_pch.cmake). Test: tests/cli/new_user_test.cpp (gbcheck
// --version names the LibTorch version).
#pragma once

#include <string>

namespace gbc {

/// The version of LibTorch gbcheck was built against ("1.13.0").
std::string torch_version();

/// Whether LibTorch sees a CUDA device (false on a CPU-only build or without a driver).
bool torch_has_cuda();

/// Makes ATen's CPU kernels single-threaded: call before run_sandboxed forks children, so no OpenMP
/// pool is copied half-held into them (harness/sandbox/sandbox.h).
void use_one_aten_thread();

}  // namespace gbc
