#include "harness/cli/crash_report.h"

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <cstdio>

#include "harness/runner/check_report.h"

namespace gbc {
namespace {

// Formatted ahead of time: a signal handler may only call async-signal-safe functions (write,
// open, rename). Each text is split where the signal's name goes.
struct SplitText {
  char before[8192], after[8192];
  size_t before_len = 0, after_len = 0;

  void set(const std::string& text, const std::string& marker) {
    const size_t at = text.find(marker);
    const std::string b = text.substr(0, at), a = at == std::string::npos ? "" : text.substr(at + marker.size());
    before_len = std::min(b.size(), sizeof before);
    after_len = std::min(a.size(), sizeof after);
    memcpy(before, b.data(), before_len);
    memcpy(after, a.data(), after_len);
  }
  void write_to(int fd, const char* signal_name) const {
    ssize_t ignored = write(fd, before, before_len);
    ignored = write(fd, signal_name, strlen(signal_name));
    ignored = write(fd, after, after_len);
    (void)ignored;
  }
};

const char kSignal[] = "@SIGNAL@";
SplitText g_message, g_json;
char g_json_path[4096], g_json_tmp[4104];
CrashReportSetup g_setup;

void format_message(int case_index) {
  const CrashReportSetup& s = g_setup;
  const std::string k = std::to_string(case_index);
  const std::string where = "case " + k + " of " + s.model_path + " (backends: " + s.backends + ")";
  const std::string banner = s.banner.empty() ? "" : s.banner + "\n";
  std::string text;
  if (s.quiet) {
    text = banner + "result: FAIL: caught " + kSignal + " while checking " + where + "\n" + banner;
  } else {
    text = banner + s.header + "\ngbcheck: caught " + kSignal + "\nresult: FAIL: the process died while checking " + where +
           "\n  a compiled path (or LibTorch itself) crashed; reduce, bisect and repro check in a child process:\n"
           "  replay:  " + s.replay + " --case " + k + "\n" +
           "  reduce:  " + s.replay.substr(0, s.replay.find(' ')) + " reduce" + s.replay.substr(s.replay.find(' ')) +
           " --case " + k + "\n" + banner;
  }
  g_message.set(text, kSignal);
  if (s.json_path.empty()) return;
  nlohmann::json j = s.json;
  j["pass"] = false;
  j["exit_code"] = kExitDivergence;
  j["crash"] = {{"case", case_index}, {"signal", kSignal}, {"replay", s.replay + " --case " + k}};
  g_json.set(j.dump(2) + "\n", kSignal);  // the marker sits inside the quotes of a JSON string
}

extern "C" void on_fatal_signal(int sig) {
  const char* name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE"
                   : sig == SIGILL  ? "SIGILL"  : "SIGABRT";
  g_message.write_to(STDOUT_FILENO, name);
  if (g_json_path[0]) {
    const int fd = open(g_json_tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      g_json.write_to(fd, name);
      close(fd);
      rename(g_json_tmp, g_json_path);
    }
  }
  _exit(kExitDivergence);
}

}  // namespace

void install_crash_report(const CrashReportSetup& setup) {
  g_setup = setup;
  snprintf(g_json_path, sizeof g_json_path, "%s", setup.json_path.c_str());
  snprintf(g_json_tmp, sizeof g_json_tmp, "%s.tmp", setup.json_path.c_str());
  format_message(0);
  fflush(stdout);
  struct sigaction sa {};
  sa.sa_handler = on_fatal_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND;  // a crash inside the handler ends the process the default way
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) sigaction(sig, &sa, nullptr);
}

void set_crash_case(int case_index) {
  fflush(stdout);  // what was printed before the crash stays in front of the message
  format_message(case_index);
}

}  // namespace gbc
