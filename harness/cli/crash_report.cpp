#include "harness/cli/crash_report.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <cstdio>

#include "harness/runner/check_report.h"

namespace gbc {
namespace {

// Formatted ahead of time: a signal handler may only call async-signal-safe functions.
char g_message[4096];
size_t g_message_len = 0;
std::string g_model, g_backends, g_replay;

void format_message(int case_index) {
  const std::string text =
      "\nresult: FAIL: the process died while checking case " + std::to_string(case_index) + " of " + g_model +
      " (backends: " + g_backends + ")\n" +
      "  a compiled path (or LibTorch itself) crashed; reduce, bisect and repro check in a child process:\n"
      "  replay:  " + g_replay + " --case " + std::to_string(case_index) + "\n" +
      "  reduce:  " + g_replay.substr(0, g_replay.find(' ')) + " reduce" + g_replay.substr(g_replay.find(' ')) +
      " --case " + std::to_string(case_index) + "\n";
  g_message_len = std::min(text.size(), sizeof(g_message));
  memcpy(g_message, text.data(), g_message_len);
}

extern "C" void on_fatal_signal(int sig) {
  const char* name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE"
                   : sig == SIGILL  ? "SIGILL"  : "SIGABRT";
  const char prefix[] = "\ngbcheck: caught ";
  ssize_t ignored = write(STDOUT_FILENO, prefix, sizeof(prefix) - 1);
  ignored = write(STDOUT_FILENO, name, strlen(name));
  ignored = write(STDOUT_FILENO, g_message, g_message_len);
  (void)ignored;
  _exit(kExitDivergence);
}

}  // namespace

void install_crash_report(const std::string& model_name, const std::string& backends, const std::string& replay) {
  g_model = model_name;
  g_backends = backends;
  g_replay = replay;
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
