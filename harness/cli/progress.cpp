#include "harness/cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace gbc {

Progress::Progress(std::string what)
    : what_(std::move(what)), tty_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()),
      last_plain_(start_) {}

Progress::~Progress() { finish(); }

void Progress::update(int done, int total, const std::string& detail) {
  auto now = std::chrono::steady_clock::now();
  double elapsed = std::chrono::duration<double>(now - start_).count();
  // Quick runs stay quiet; anything over a second shows progress.
  if (elapsed < 1.0 && done < total) return;
  double eta = done > 0 ? elapsed * (total - done) / done : 0.0;
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s %d/%d  %.1fs elapsed, ~%.0fs left%s%s", what_.c_str(), done, total, elapsed, eta,
                 detail.empty() ? "" : "  ", detail.c_str());
    std::fflush(stderr);
    shown_ = true;
  } else if (now - last_plain_ >= std::chrono::seconds(5)) {
    std::fprintf(stderr, "%s %d/%d, %.0fs elapsed, ~%.0fs left%s%s\n", what_.c_str(), done, total, elapsed, eta,
                 detail.empty() ? "" : ", ", detail.c_str());
    last_plain_ = now;
  }
}

void Progress::finish() {
  if (tty_ && shown_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }
}

}  // namespace gbc
