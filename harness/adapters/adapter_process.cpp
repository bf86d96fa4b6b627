#include "harness/adapters/adapter_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "compiler/support/file_tree.h"
#include "harness/sandbox/sandbox.h"

namespace gbc {
namespace {

constexpr size_t kStderrKept = 16 * 1024;

int millis_until(AdapterProcess::Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - AdapterProcess::Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, 1 << 30));
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

std::unique_ptr<AdapterProcess> AdapterProcess::start(const std::vector<std::string>& argv, size_t memory_bytes) {
  if (argv.empty()) throw std::runtime_error("no command to start");
  ::signal(SIGPIPE, SIG_IGN);
  const char* tmp = std::getenv("TMPDIR");
  std::string scratch = std::string(tmp && *tmp ? tmp : "/tmp") + "/gbcheck-adapter-XXXXXX";
  if (!::mkdtemp(scratch.data())) throw std::runtime_error("cannot make its scratch folder " + scratch + ": " + std::strerror(errno));
  std::vector<std::string> env_strings = {"GBCHECK_ADAPTER_SCRATCH=" + scratch};
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "GBCHECK_ADAPTER_SCRATCH=", 24) != 0) env_strings.push_back(*e);
  int in[2], out[2], err[2], exec_err[2];
  if (::pipe2(in, O_CLOEXEC) || ::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC) || ::pipe2(exec_err, O_CLOEXEC))
    throw std::runtime_error(std::string("cannot create pipes: ") + std::strerror(errno));
  // Everything the child needs is made before fork: between fork and exec only async-signal-safe
  // calls are allowed in a process that may have other threads.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    std::error_code ignored;
    remove_tree(scratch, ignored);
    throw std::runtime_error(std::string("cannot fork: ") + std::strerror(e));
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    ::signal(SIGPIPE, SIG_DFL);
    if (memory_bytes) {
      struct rlimit lim = {memory_bytes, memory_bytes};
      ::setrlimit(RLIMIT_DATA, &lim);
    }
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    ::execvpe(args[0], args.data(), envp.data());
    int e = errno;
    ssize_t ignored = ::write(exec_err[1], &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  ::close(exec_err[1]);
  int e = 0;
  ssize_t n;
  do n = ::read(exec_err[0], &e, sizeof e);
  while (n < 0 && errno == EINTR);
  ::close(exec_err[0]);
  std::unique_ptr<AdapterProcess> p(new AdapterProcess);
  p->pid_ = pid;
  p->owner_ = parent;
  p->in_ = in[1];
  p->out_ = out[0];
  p->err_ = err[0];
  p->scratch_ = scratch;
  if (n == static_cast<ssize_t>(sizeof e)) {
    p->kill_and_reap();
    throw std::runtime_error("cannot run '" + argv[0] + "': " + std::strerror(e));
  }
  return p;
}

AdapterProcess::~AdapterProcess() {
  // A forked child inherited these descriptors: it closes its copies and leaves the process alone.
  if (::getpid() == owner_) kill_and_reap();
  close_fd(in_);
  close_fd(out_);
  close_fd(err_);
}

void AdapterProcess::drain_stderr() {
  char buf[4096];
  while (err_ >= 0) {
    struct pollfd p = {err_, POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) return;
    ssize_t n = ::read(err_, buf, sizeof buf);
    if (n <= 0) {
      close_fd(err_);
      return;
    }
    stderr_.append(buf, static_cast<size_t>(n));
    if (stderr_.size() > 2 * kStderrKept) stderr_.erase(0, stderr_.size() - kStderrKept);
  }
}

std::string AdapterProcess::stderr_tail() {
  drain_stderr();
  return stderr_.size() > kStderrKept ? stderr_.substr(stderr_.size() - kStderrKept) : stderr_;
}

// An adapter blocked on a full stderr pipe would never read or write: stderr is drained while waiting.
AdapterProcess::Io AdapterProcess::wait_ready(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    struct pollfd fds[2] = {{fd, events, 0}, {err_, POLLIN, 0}};
    int r = ::poll(fds, err_ >= 0 ? 2 : 1, millis_until(deadline));
    if (r < 0 && errno == EINTR) continue;
    if (r == 0) return Io::Timeout;
    if (err_ >= 0 && fds[1].revents) drain_stderr();
    if (fds[0].revents) return Io::Ok;
  }
}

AdapterProcess::Io AdapterProcess::write_all(const std::string& bytes, Clock::time_point deadline) {
  size_t done = 0;
  while (done < bytes.size()) {
    if (in_ < 0) return Io::Closed;
    if (Io ready = wait_ready(in_, POLLOUT, deadline); ready != Io::Ok) return ready;
    ssize_t n = ::write(in_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return Io::Closed;  // EPIPE: it is gone
    done += static_cast<size_t>(n);
  }
  return Io::Ok;
}

AdapterProcess::Io AdapterProcess::read_exact(size_t n, std::string& out, Clock::time_point deadline) {
  out.clear();
  out.reserve(n);
  std::string buf(std::min<size_t>(n, 1 << 20), '\0');
  while (out.size() < n) {
    if (out_ < 0) return Io::Closed;
    if (Io ready = wait_ready(out_, POLLIN, deadline); ready != Io::Ok) return ready;
    ssize_t got = ::read(out_, buf.data(), std::min(buf.size(), n - out.size()));
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) {
      close_fd(out_);
      return Io::Closed;
    }
    out.append(buf.data(), static_cast<size_t>(got));
  }
  return Io::Ok;
}

bool AdapterProcess::borrowed() const { return ::getpid() != owner_; }

bool AdapterProcess::running() { return !reap(false); }

bool AdapterProcess::reap(bool block) {
  if (reaped_ || pid_ <= 0) return true;
  if (borrowed()) return observe_end(block);
  int status = 0;
  pid_t r;
  do r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == 0) return false;
  reaped_ = true;
  if (r == pid_) {
    if (WIFSIGNALED(status)) signal_ = WTERMSIG(status);
    if (WIFEXITED(status)) exit_status_ = WEXITSTATUS(status);
  }
  return true;
}

// /proc/PID/stat: after the command's closing parenthesis, field 3 is the state and field 52 the
// exit status in waitpid's form (Linux 3.5 and later), kept while the process is a zombie.
bool AdapterProcess::observe_end(bool block) {
  for (;;) {
    std::ifstream file("/proc/" + std::to_string(pid_) + "/stat");
    const std::string stat((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) {  // gone: its owner reaped it
      reaped_ = true;
      exit_status_ = -2;
      return true;
    }
    std::istringstream fields(stat.substr(close + 1));
    std::vector<std::string> f{std::istream_iterator<std::string>(fields), std::istream_iterator<std::string>()};
    if (!f.empty() && (f[0] == "Z" || f[0] == "X")) {
      reaped_ = true;
      const int status = f.size() > 49 ? std::atoi(f[49].c_str()) : 0;
      if (WIFSIGNALED(status)) signal_ = WTERMSIG(status);
      if (WIFEXITED(status)) exit_status_ = WEXITSTATUS(status);
      return true;
    }
    if (!block) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool AdapterProcess::reap_within(std::chrono::milliseconds grace) {
  const auto until = Clock::now() + grace;
  while (!reap(false) && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  return reap(false);
}

void AdapterProcess::kill_now() {
  ::kill(-pid_, SIGKILL);
  ::kill(pid_, SIGKILL);
  reap(true);
  // Our SIGKILL is not the adapter's crash.
  if (signal_ == SIGKILL) signal_ = 0, exit_status_ = -1;
}

void AdapterProcess::kill_and_reap() {
  if (borrowed()) {
    // Its input stays open (the owner holds it too), so it would not leave by itself; the owner
    // reaps it and removes its folder.
    close_fd(in_);
    if (!reap(false)) kill_now();
    drain_stderr();
    return;
  }
  if (reaped_ || pid_ <= 0) {
    std::error_code ignored;
    remove_tree(scratch_, ignored);  // reaped on its own (it exited): its folder goes now
    return;
  }
  // End of input first: an adapter that is listening leaves by itself and cleans up after itself
  // (its scratch files); one that is not gets a moment, then SIGKILL.
  close_fd(in_);
  if (!reap_within(std::chrono::milliseconds(500))) {
    kill_now();
  } else {
    ::kill(-pid_, SIGKILL);  // workers it left behind
  }
  drain_stderr();
  std::error_code ignored;
  remove_tree(scratch_, ignored);
}

std::string AdapterProcess::wait_exit(std::chrono::milliseconds grace) {
  reap_within(grace);
  kill_and_reap();
  return ended_how();
}

std::string AdapterProcess::ended_how() const {
  if (!reaped_) return "still running";
  if (signal_) return "killed by " + signal_name(signal_) + " (signal " + std::to_string(signal_) + ")";
  if (exit_status_ == -2) return "ended (how, only the process that started it knows)";
  if (exit_status_ < 0) return "killed by gbcheck";
  return "exited with status " + std::to_string(exit_status_);
}

}  // namespace gbc
