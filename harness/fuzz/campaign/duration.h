// Durations on the command line: `--time 8h`, `90m`, `1h30m`, `45s`, or plain seconds (`300`).
// Tested in tests/fuzz/fuzz_campaign_test.cpp.
#pragma once

#include <string>

namespace gbc {

/// Seconds; throws std::invalid_argument naming the text for anything else (or zero).
double parse_duration(const std::string& text);

}  // namespace gbc
