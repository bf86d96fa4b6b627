// Validators for option values, so that every command rejects a bad value before it runs, with a
// message that says what is allowed: whole numbers in a range (no silent clamping of a seed above
// INT64_MAX, no 300-digit range for `-n 0`), non-negative amounts, and output files that can be
// written (a --json path or an --out folder is checked before a long run, not after it).
// Test: tests/cli/new_user_test.cpp.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>

namespace gbc {

/// A whole number from `lo` to `hi`, written in decimal.
CLI::Validator whole_number(int64_t lo, int64_t hi = std::numeric_limits<int64_t>::max());

/// A number (fractions allowed) of at least `lo`.
CLI::Validator number_at_least(double lo);

/// A file that can be created or replaced: its folder exists and takes new files.
CLI::Validator writable_file();

/// A folder that exists and takes new files, or can be created (its nearest existing ancestor is
/// a folder that takes new files).
CLI::Validator writable_folder();

}  // namespace gbc
