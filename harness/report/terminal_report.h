// The human-readable report: one line per backend (verdict, cases, worst error, fusion groups,
// graph breaks, fallbacks, compile time), then the details of each failure with the command that
// replays it.
#pragma once

#include <ostream>
#include <string>

#include "harness/runner/check_report.h"

namespace gbc {

struct TerminalStyle {
  bool color = false;
  bool verbose = false;  // list every compile event, not only those behind a failure
};

/// The first line: version, model, cases, device, seed, LibTorch (no newline).
std::string report_header(const CheckReport& report);

void print_terminal_report(const CheckReport& report, std::ostream& out, const TerminalStyle& style);

}  // namespace gbc
