// What a running fuzz campaign shows: on a terminal a line that rewrites itself every second
// (graphs checked, graphs/s, failures, unique signatures and new ones, elapsed and remaining
// time), otherwise the same as a plain line once a minute, so CI logs show life without flooding.
// Tested in tests/fuzz/fuzz_campaign_test.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace gbc {

struct FuzzTally {
  int64_t cases = 0;      // graphs checked by this run (resumed ones included)
  int64_t failed = 0;
  int64_t invalid = 0;
  int64_t signatures = 0;      // distinct signatures this run hit
  int64_t new_signatures = 0;  // of the store's, status new
  int64_t session_cases = 0;   // graphs checked since this process started (for the rate)
  double elapsed_s = 0;        // of the run, resumed time included
  double session_s = 0;        // since this process started
  std::optional<double> remaining_s;
  std::optional<int64_t> cases_total;
};

/// "1234 graphs (5.2/s) | 3 failed, 0 invalid | 2 signatures, 2 new | 0:10:00 elapsed, 7:50:00 left"
std::string format_tally(const FuzzTally& t);
/// "1:02:03"
std::string format_duration(double seconds);

class FuzzProgress {
 public:
  FuzzProgress(std::ostream& out, bool tty, std::string prefix);
  /// Shows `t` if it is time to (every second on a terminal, every minute otherwise).
  void update(const FuzzTally& t);
  /// Ends the live line (the final summary follows on its own line).
  void finish();

 private:
  std::ostream& out_;
  bool tty_;
  std::string prefix_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace gbc
