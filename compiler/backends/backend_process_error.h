// The error a backend raises when its own process failed (an adapter crashed, hung, ran out of
// memory or answered garbage: harness/adapters/adapter_backend.h). It fails the case like any
// error, but the check runner does not shrink it: every try would start the process again.
// Test: tests/adapters/adapter_failures_test.cpp.
#pragma once

#include <stdexcept>

namespace gbc {

class BackendProcessError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gbc
