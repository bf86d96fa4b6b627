// Progress for long runs on stderr: a self-updating line on a terminal, otherwise a plain line
// at most every 5 seconds (piped runs and CI logs show life without flooding), as reduce does.
#pragma once

#include <chrono>
#include <string>

namespace gbc {

class Progress {
 public:
  explicit Progress(std::string what);
  ~Progress();
  /// Reports `done` of `total`; `detail` is appended ("3 failures").
  void update(int done, int total, const std::string& detail = "");
  /// Clears the terminal line (before the report is printed).
  void finish();

 private:
  std::string what_;
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_, last_plain_;
};

}  // namespace gbc
