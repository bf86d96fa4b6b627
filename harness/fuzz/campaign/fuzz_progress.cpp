#include "harness/fuzz/campaign/fuzz_progress.h"

#include <cstdio>
#include <sstream>

namespace gbc {

std::string format_duration(double seconds) {
  auto s = static_cast<long long>(seconds < 0 ? 0 : seconds);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  return buf;
}

std::string format_tally(const FuzzTally& t) {
  std::ostringstream o;
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.1f", t.session_s > 0 ? static_cast<double>(t.session_cases) / t.session_s : 0.0);
  o << t.cases;
  if (t.cases_total) o << "/" << *t.cases_total;
  o << " graphs (" << rate << "/s) | " << t.failed << " failed, " << t.invalid << " invalid | " << t.signatures
    << (t.signatures == 1 ? " signature, " : " signatures, ") << t.new_signatures << " new | "
    << format_duration(t.elapsed_s) << " elapsed";
  // Past the limit the run still waits for the graphs its workers are checking.
  if (t.remaining_s) o << ", " << (*t.remaining_s > 0 ? format_duration(*t.remaining_s) + " left" : "time is up, finishing the graphs in flight");
  return o.str();
}

FuzzProgress::FuzzProgress(std::ostream& out, bool tty, std::string prefix)
    : out_(out), tty_(tty), prefix_(std::move(prefix)), last_(std::chrono::steady_clock::now()) {}

void FuzzProgress::update(const FuzzTally& t) {
  auto now = std::chrono::steady_clock::now();
  auto every = tty_ ? std::chrono::seconds(1) : std::chrono::seconds(60);
  // A terminal shows the first line at once; a plain log waits a minute for it too.
  if (now - last_ < every && (shown_ || !tty_)) return;
  last_ = now;
  shown_ = true;
  if (tty_) out_ << "\r\033[K" << prefix_ << format_tally(t) << std::flush;
  else out_ << prefix_ << format_tally(t) << "\n" << std::flush;
}

void FuzzProgress::finish() {
  if (tty_ && shown_) out_ << "\r\033[K" << std::flush;
}

}  // namespace gbc
