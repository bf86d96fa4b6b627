// Reads a trace folder (DIR/trace.jsonl, compiler/support/trace.h) back: every event that parses,
// in file order; a line that does not (the last one of a killed run) is counted and skipped.
// Test: tests/report/html_report_test.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gbc {

struct Trace {
  std::string dir;
  std::vector<nlohmann::json> events;
  int unreadable_lines = 0;
  bool finished = false;  // a trace_end event was written
  int exit_code = -1;     // trace_end's

  /// The events named `event`, in order.
  std::vector<const nlohmann::json*> all(const std::string& event) const;
};

/// Throws std::runtime_error when DIR has no trace.jsonl or it is not a gbcheck trace.
Trace read_trace(const std::string& dir);

}  // namespace gbc
