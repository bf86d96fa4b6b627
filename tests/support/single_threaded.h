// Including this header makes the whole test binary single-threaded: gbc's native kernels
// ($GBCHECK_THREADS) and ATen both, so that forking a check into a sandbox is safe
// (harness/sandbox/sandbox.h) and timings do not depend on the machine's cores. Used by the
// faults, bisect, repro and reducer suites.
#pragma once

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace gbc::testing {

class SingleThreaded : public ::testing::Environment {
 public:
  void SetUp() override {
    setenv("GBCHECK_THREADS", "1", 1);
    at::set_num_threads(1);
  }
};

/// Registered once per binary, however many of its files include this header.
inline const ::testing::Environment* const kSingleThreaded = ::testing::AddGlobalTestEnvironment(new SingleThreaded);

}  // namespace gbc::testing
