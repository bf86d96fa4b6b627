#include "compiler/support/trace.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>

namespace gbc::trace {
namespace {

struct Sink {
  std::mutex mu;
  int fd = -1;
  pid_t owner = 0;  // a forked child renumbers its events
  int64_t seq = 0;
  std::string dir;
  std::chrono::steady_clock::time_point start;
};

Sink& sink() {
  static Sink* s = new Sink();  // never destroyed: events may come from static destructors
  return *s;
}

std::atomic<bool> g_enabled{false};

void write_all(int fd, const std::string& line) {
  const char* p = line.data();
  size_t left = line.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n <= 0) return;  // a full disk must not stop the check
    p += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace

std::string open(const std::string& dir, const std::string& command) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = (std::filesystem::path(dir) / kFileName).string();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot write " + path;
  {
    Sink& s = sink();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.fd >= 0) ::close(s.fd);
    s.fd = fd;
    s.owner = ::getpid();
    s.seq = 0;
    s.dir = dir;
    s.start = std::chrono::steady_clock::now();
  }
  ::setenv(kEnvVar, dir.c_str(), 1);
  g_enabled = true;
  std::error_code cwd_error;
  emit("trace_start", {{"schema", kSchema}, {"command", command}, {"cwd", std::filesystem::current_path(cwd_error).string()}});
  return "";
}

void open_from_environment(const std::string& command) {
  if (g_enabled) return;
  const char* dir = std::getenv(kEnvVar);
  if (dir && *dir) open(dir, command);
}

bool enabled() { return g_enabled; }

std::string directory() {
  if (!g_enabled) return "";
  Sink& s = sink();
  std::lock_guard<std::mutex> lock(s.mu);
  return s.dir;
}

void emit(const std::string& event, nlohmann::json fields) {
  if (!g_enabled) return;
  Sink& s = sink();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.fd < 0) return;
  if (s.owner != ::getpid()) {  // a forked sandbox child: its own numbering and clock
    s.owner = ::getpid();
    s.seq = 0;
  }
  nlohmann::json line = {{"event", event},
                         {"seq", s.seq++},
                         {"pid", static_cast<int64_t>(s.owner)},
                         {"t_ms", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s.start).count()}};
  if (fields.is_object()) line.update(fields);
  // Invalid UTF-8 (a kernel log, a user's op name) is replaced, never an exception mid-run.
  write_all(s.fd, line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

void close(int exit_code) {
  if (!g_enabled) return;
  emit("trace_end", {{"exit_code", exit_code}});
  Sink& s = sink();
  std::lock_guard<std::mutex> lock(s.mu);
  g_enabled = false;
  if (s.fd >= 0) ::close(s.fd);
  s.fd = -1;
}

}  // namespace gbc::trace
