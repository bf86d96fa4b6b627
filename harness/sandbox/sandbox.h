// Crash isolation: runs a function in a forked child process under a wall-time limit and an
// address-space limit (setrlimit RLIMIT_AS), and returns what happened as a SandboxResult: the
// function's JSON result, or the signal that killed the child, a timeout, an out-of-memory, or the
// text of the exception it threw. The result travels back through a pipe as JSON (nlohmann).
// The reducer checks every candidate this way and the fuzzer every generated graph, so a candidate
// that segfaults, hangs or allocates without bound cannot take the caller down. The child's
// $TMPDIR is a folder of its own that the parent removes when the child has ended, however it
// ended: what it and the processes it started (adapters) leave there is gone even when a timeout
// killed it, or when it left through _exit without running destructors.
//
// Fork safety (read before calling from a process that loaded LibTorch): fork copies only the
// calling thread. A lock held by another thread at that moment stays locked forever in the child,
// and OpenMP (which ATen's CPU kernels use) hangs in a child whose parent had started a parallel
// region with more than one thread. So call run_sandboxed from the main thread while no other
// thread does torch work, and make ATen single-threaded in the parent before its first parallel
// op (at::set_num_threads(1)), as `gbcheck reduce` does. The wall-time limit is the backstop if a
// library still deadlocks in the child.
//
// Test: tests/sandbox/sandbox_test.cpp.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace gbc {

struct SandboxLimits {
  /// Wall-clock seconds before the child (and its process group) is killed; <= 0: no limit.
  double timeout_s = 30.0;
  /// Address space the child may add to what it inherited at fork (bytes); 0: no limit. Counted
  /// on top of the inherited mappings because a LibTorch process starts with gigabytes of virtual
  /// address space that it never touches.
  size_t memory_bytes = 0;
};

struct SandboxResult {
  enum class Status {
    Ok,           // the function returned; `value` holds its result
    Exception,    // it threw; `exception_type` and `error` say what
    Crash,        // a signal killed the child; `signal` and `signal_name`
    Timeout,      // it ran past timeout_s and was killed
    OutOfMemory,  // an allocation failed under the memory limit
    Exited,       // the child exited (exit() or _exit()) without returning a result; `exit_code`
  };
  Status status = Status::Ok;
  nlohmann::json value;        // Ok: the function's result
  std::string exception_type;  // Exception: the demangled C++ type ("c10::Error")
  std::string error;           // Exception, OutOfMemory: the message; others: a description
  int signal = 0;              // Crash
  std::string signal_name;     // Crash: "SIGSEGV"
  int exit_code = 0;           // Exited
  double elapsed_ms = 0.0;
  std::string stderr_tail;     // the last few KiB the child wrote to stderr (crash messages)

  bool ok() const { return status == Status::Ok; }
  /// One line: "ok", "crash SIGSEGV (signal 11)", "timeout after 2.0 s", ...
  std::string summary() const;
  static std::string status_name(Status status);  // ok, exception, crash, timeout, oom, exited
};

/// Runs `fn` in a forked child under `limits` and waits for it. The child runs nothing else
/// (it leaves with _exit, skipping atexit handlers and static destructors of the parent's state).
/// Errors in setting up the sandbox itself (pipe, fork) throw std::system_error.
SandboxResult run_sandboxed(const std::function<nlohmann::json()>& fn, const SandboxLimits& limits);

/// "SIGSEGV" for 11, "SIG42" for a signal without a common name.
std::string signal_name(int signal);

}  // namespace gbc
