#include "harness/sandbox/sandbox.h"

#include <cxxabi.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <sstream>
#include <system_error>
#include <thread>
#include <typeinfo>

#include "compiler/support/file_tree.h"
#include "harness/sandbox/coverage_dump.h"

namespace gbc {
namespace {

constexpr size_t kStderrTail = 4096;

std::string demangle(const char* name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

// Allocators other than operator new report exhaustion as ordinary exceptions (ATen's CPU
// allocator throws c10::Error "DefaultCPUAllocator: can't allocate memory").
bool looks_like_oom(const std::string& what) {
  return what.find("can't allocate memory") != std::string::npos ||
         what.find("not enough memory") != std::string::npos || what.find("out of memory") != std::string::npos;
}

void write_all(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the parent went away: nobody to tell
    done += static_cast<size_t>(n);
  }
}

size_t inherited_address_space() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long pages = 0;
  int got = std::fscanf(f, "%lu", &pages);
  std::fclose(f);
  return got == 1 ? pages * static_cast<size_t>(::sysconf(_SC_PAGESIZE)) : 0;
}

// The child's $TMPDIR: a new folder under the parent's ("" when none can be made: the child then
// uses the parent's, as before).
std::string make_scratch_folder() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/gbcheck-sandbox-XXXXXX";
  return ::mkdtemp(pattern.data()) ? pattern : std::string();
}

void remove_scratch_folder(const std::string& path) {
  if (path.empty()) return;
  // Processes the child started in groups of their own (adapters) die with it through
  // PR_SET_PDEATHSIG, a moment later: one may still be writing there on the first try.
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::error_code ec;
    remove_tree(path, ec);
    if (!ec) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

[[noreturn]] void child_main(const std::function<nlohmann::json()>& fn, const SandboxLimits& limits, int result_fd,
                             int stderr_fd, const std::string& scratch) {
  // Its own process group, so that a timeout also kills what the function spawned (compilers).
  ::setpgid(0, 0);
  // Temporary files go where the parent removes them (the sandbox is single-threaded: see above).
  if (!scratch.empty()) ::setenv("TMPDIR", scratch.c_str(), 1);
  ::dup2(stderr_fd, STDERR_FILENO);
  ::close(stderr_fd);
  ::signal(SIGPIPE, SIG_DFL);
  struct rlimit no_core = {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);  // crashing candidates are expected; core files are not wanted
  if (limits.memory_bytes > 0) {
    rlim_t cap = static_cast<rlim_t>(inherited_address_space() + limits.memory_bytes);
    struct rlimit as = {cap, cap};
    ::setrlimit(RLIMIT_AS, &as);
  }
  nlohmann::json out;
  try {
    out = {{"status", "ok"}, {"value", fn()}};
  } catch (const std::bad_alloc& e) {
    out = {{"status", "oom"}, {"type", demangle(typeid(e).name())}, {"what", e.what()}};
  } catch (const std::exception& e) {
    std::string what = e.what();
    out = {{"status", looks_like_oom(what) ? "oom" : "exception"}, {"type", demangle(typeid(e).name())}, {"what", what}};
  } catch (...) {
    out = {{"status", "exception"}, {"type", "unknown"}, {"what", "a non-standard exception"}};
  }
  std::string text;
  try {
    text = out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::bad_alloc&) {
    text = R"({"status":"oom","type":"std::bad_alloc","what":"serializing the result"})";
  }
  write_all(result_fd, text);
  ::close(result_fd);
  std::fflush(stderr);
  dump_coverage();
  ::_exit(0);
}

}  // namespace

std::string signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    case SIGPIPE: return "SIGPIPE";
    case SIGXCPU: return "SIGXCPU";
    default: return "SIG" + std::to_string(sig);
  }
}

std::string SandboxResult::status_name(Status status) {
  switch (status) {
    case Status::Ok: return "ok";
    case Status::Exception: return "exception";
    case Status::Crash: return "crash";
    case Status::Timeout: return "timeout";
    case Status::OutOfMemory: return "oom";
    case Status::Exited: return "exited";
  }
  return "unknown";
}

std::string SandboxResult::summary() const {
  std::ostringstream s;
  s << status_name(status);
  switch (status) {
    case Status::Ok: break;
    case Status::Exception: s << " " << exception_type << ": " << error.substr(0, error.find('\n')); break;
    case Status::Crash: s << " " << signal_name << " (signal " << signal << ")"; break;
    case Status::Timeout: s << " after " << elapsed_ms / 1000.0 << " s"; break;
    case Status::OutOfMemory: s << ": " << error.substr(0, error.find('\n')); break;
    case Status::Exited: s << " with code " << exit_code << " without a result"; break;
  }
  return s.str();
}

SandboxResult run_sandboxed(const std::function<nlohmann::json()>& fn, const SandboxLimits& limits) {
  int result_pipe[2], err_pipe[2];
  if (::pipe2(result_pipe, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "sandbox: pipe");
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    int e = errno;
    ::close(result_pipe[0]);
    ::close(result_pipe[1]);
    throw std::system_error(e, std::generic_category(), "sandbox: pipe");
  }
  std::fflush(stdout);  // buffered output would otherwise be written twice, by parent and child
  std::fflush(stderr);
  const std::string scratch = make_scratch_folder();
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    for (int fd : {result_pipe[0], result_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    remove_scratch_folder(scratch);
    throw std::system_error(e, std::generic_category(), "sandbox: fork");
  }
  if (pid == 0) {
    ::close(result_pipe[0]);
    ::close(err_pipe[0]);
    child_main(fn, limits, result_pipe[1], err_pipe[1], scratch);
  }
  ::setpgid(pid, pid);  // also here: no race with the child's own call
  ::close(result_pipe[1]);
  ::close(err_pipe[1]);

  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  std::string result_text, err_text;
  bool timed_out = false;
  pollfd fds[2] = {{result_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    int wait_ms = -1;
    if (limits.timeout_s > 0) {
      double left = limits.timeout_s * 1000.0 - elapsed_ms();
      if (left <= 0) {
        timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::ceil(left));
    }
    int n = ::poll(fds, 2, wait_ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
        continue;
      }
      std::string& dst = i == 0 ? result_text : err_text;
      dst.append(buf, static_cast<size_t>(got));
      if (i == 1 && err_text.size() > 2 * kStderrTail) err_text.erase(0, err_text.size() - kStderrTail);
    }
  }
  if (timed_out) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Whatever the function spawned and left behind goes with it.
  ::kill(-pid, SIGKILL);
  for (const pollfd& p : fds)
    if (p.fd >= 0) ::close(p.fd);
  remove_scratch_folder(scratch);

  SandboxResult r;
  r.elapsed_ms = elapsed_ms();
  r.stderr_tail = err_text.size() > kStderrTail ? err_text.substr(err_text.size() - kStderrTail) : err_text;
  if (timed_out) {
    r.status = SandboxResult::Status::Timeout;
    r.error = "killed after " + std::to_string(limits.timeout_s) + " s";
    return r;
  }
  if (WIFSIGNALED(status)) {
    r.status = SandboxResult::Status::Crash;
    r.signal = WTERMSIG(status);
    r.signal_name = signal_name(r.signal);
    r.error = "killed by " + r.signal_name;
    return r;
  }
  nlohmann::json j = nlohmann::json::parse(result_text, nullptr, /*allow_exceptions=*/false);
  if (result_text.empty() || j.is_discarded() || !j.is_object()) {
    r.status = SandboxResult::Status::Exited;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.error = "the child exited with code " + std::to_string(r.exit_code) + " without a result";
    return r;
  }
  const std::string st = j.value("status", "");
  if (st == "ok") {
    r.status = SandboxResult::Status::Ok;
    r.value = std::move(j["value"]);
  } else {
    r.status = st == "oom" ? SandboxResult::Status::OutOfMemory : SandboxResult::Status::Exception;
    r.exception_type = j.value("type", "");
    r.error = j.value("what", "");
  }
  return r;
}

}  // namespace gbc
