// An external backend as configs/backends.yaml defines it (harness/adapters/backends_config.h
// reads it): the adapter command, its limits and what it needs to run. Plain data.
// Test: tests/adapters/backends_config_test.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/diagnostics.h"

namespace gbc {

struct AdapterRequirements {
  std::string torch;                         // minimum PyTorch version ("2.0"); "" = any
  std::vector<std::string> python_modules;   // modules the adapter imports ("torch._dynamo")
  std::string device;                        // "cuda": only with a GPU; "" = any
};

struct AdapterSpec {
  std::string name;
  std::string description;
  std::vector<std::string> command;  // program, then its arguments; {here} resolved, {python} when started
  double timeout_s = 120;            // for each answer (a compile included)
  double startup_timeout_s = 120;    // for the adapter's hello (importing torch is slow)
  int64_t memory_mb = 16384;         // RLIMIT_DATA of the adapter on the CPU; 0 = no limit
  AdapterRequirements requires;
  SourceLoc loc;                     // where it was defined
};

}  // namespace gbc
