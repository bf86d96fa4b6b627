// An adapter's process: started with its stdin and stdout as pipes to gbcheck and its stderr
// collected, in a process group of its own (so that a timeout also ends the compile workers it
// forked), killed when gbcheck dies (PR_SET_PDEATHSIG), and with its data segment limited
// (RLIMIT_DATA: heap and private writable mappings, not the address space that CUDA and LibTorch
// reserve). Every read and write takes a deadline; nothing here blocks without one. Writing to
// an adapter that died must not kill gbcheck, so starting one ignores SIGPIPE process-wide.
// Each adapter gets a scratch folder that gbcheck makes and removes ($GBCHECK_ADAPTER_SCRATCH,
// docs/adapters.md): removed when the process is reaped, whether it left by itself or was killed
// (a SIGKILL runs no handler in the adapter; in a sandboxed child that itself is killed, the
// sandbox removes the child's $TMPDIR, where the folder is).
// A process forked from the owner may use the adapter too (fuzz's sandboxed children borrow the
// worker's adapter, adapter_session.h): it talks over the inherited pipes, kills the adapter's
// group when it must, and learns how the adapter ended from /proc (the exit status of a zombie,
// which only its parent can reap); the owner reaps it and removes its folder.
// Test: tests/adapters/adapter_process_test.cpp.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace gbc {

class AdapterProcess {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Io { Ok, Timeout, Closed };

  /// Starts argv (argv[0] looked up on PATH). memory_bytes = 0: no limit. Throws
  /// std::runtime_error when the command cannot be started (the reason as exec gave it).
  static std::unique_ptr<AdapterProcess> start(const std::vector<std::string>& argv, size_t memory_bytes);
  ~AdapterProcess();
  AdapterProcess(const AdapterProcess&) = delete;
  AdapterProcess& operator=(const AdapterProcess&) = delete;

  Io write_all(const std::string& bytes, Clock::time_point deadline);
  /// Reads exactly n bytes into out (on Closed or Timeout, out holds what came).
  Io read_exact(size_t n, std::string& out, Clock::time_point deadline);

  /// Closes its stdin, gives it half a second to leave, then kills the process group and reaps
  /// the process; how it ended, as ended_how() says. Idempotent.
  void kill_and_reap();
  /// After Closed: gives the process `grace` to exit by itself, then kills it. How it ended.
  std::string wait_exit(std::chrono::milliseconds grace);
  /// "killed by SIGSEGV (signal 11)", "exited with status 3", "still running".
  std::string ended_how() const;
  bool crashed() const { return signal_ != 0; }
  /// Not ended yet, as far as this process can tell (the owner reaps it if it has ended).
  bool running();

  /// The last 16 KiB the adapter wrote to stderr (what it printed before dying, or its prints).
  std::string stderr_tail();
  pid_t pid() const { return pid_; }
  /// The process that started it (a forked child must not use its parent's adapter).
  pid_t owner() const { return owner_; }
  /// Used from a forked child of the owner: the adapter is not this process's to reap.
  bool borrowed() const;
  /// Its scratch folder ($GBCHECK_ADAPTER_SCRATCH), gone once it is reaped.
  const std::string& scratch() const { return scratch_; }

 private:
  AdapterProcess() = default;
  void drain_stderr();
  /// Waits until `fd` is ready for `events` (POLLIN, POLLOUT), draining stderr meanwhile: Ok, or
  /// Timeout at the deadline.
  Io wait_ready(int fd, short events, Clock::time_point deadline);
  bool reap(bool block);
  /// SIGKILL to its group, then reaps it (or, borrowed, waits for it to be a zombie).
  void kill_now();
  /// reap() for a borrower: whether the adapter has ended (a zombie), and how, from /proc.
  bool observe_end(bool block);
  /// Polls for the exit for up to `grace`; whether it was reaped.
  bool reap_within(std::chrono::milliseconds grace);

  pid_t pid_ = -1;
  pid_t owner_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;  // its stdin (we write), stdout and stderr (we read)
  std::string stderr_;
  bool reaped_ = false;
  int exit_status_ = 0;
  int signal_ = 0;
  std::string scratch_;
};

}  // namespace gbc
