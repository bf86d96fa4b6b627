// One running adapter and the conversation with it (docs/adapters.md): start, hello, then
// requests (a control message and its tensors) each answered within the spec's timeout. Every
// way an adapter can fail becomes an AdapterFailure of its own kind, with a one-line message and
// the adapter's stderr; the failed session is then dead and a new one is started for the next
// request (adapter_session()). Sessions are shared per backend within a process, so that fresh
// backends (shrinking, reduction) reuse the started interpreter and only send a new model, and
// with the children it forks: a sandboxed child (fuzz's graph, a reduction's candidate) borrows
// the running adapter. What the sharers must agree on lives in a shared page: the next model id,
// the models the adapter holds, whether a request is in flight and whether the session failed, so
// that the owner restarts an adapter that a child left failed, mid-answer or holding its models
// (keep_adapter_session()).
// Test: tests/adapters/adapter_failures_test.cpp (through gbcheck, with broken adapters), and
// tests/adapters/adapter_fuzz_test.cpp (one adapter across a fuzz worker's graphs).
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/adapters/adapter_process.h"
#include "harness/adapters/adapter_spec.h"

namespace gbc {

class AdapterFailure : public std::runtime_error {
 public:
  enum class Kind {
    Start,        // the command could not be started, or answered hello wrongly
    Crash,        // a signal killed it
    Exit,         // it exited in the middle of the conversation
    Timeout,      // no answer within the timeout: killed
    OutOfMemory,  // it reported running out of memory (under memory_mb)
    Protocol,     // it answered garbage
    Raised,       // it answered with an error: the compiler raised
  };
  AdapterFailure(Kind kind, const std::string& message, std::string stderr_tail)
      : std::runtime_error(message), kind(kind), stderr_tail(std::move(stderr_tail)) {}
  Kind kind;
  std::string stderr_tail;
};

struct AdapterMessage {
  nlohmann::json control;
  std::vector<at::Tensor> tensors;  // as many as control["tensors"] says, CPU tensors
};

class AdapterSession {
 public:
  /// Starts the adapter and exchanges hellos (`hello` is gbcheck's). Throws AdapterFailure.
  AdapterSession(const AdapterSpec& spec, const nlohmann::json& hello);

  /// Sends `message` (its "tensors" count set here) and `tensors`, and waits for the answer of
  /// type `answer_type` (or "error"). `what` names the request in messages ("run case 3").
  /// Throws AdapterFailure; an "error" answer throws kind Raised (OutOfMemory for kind "oom")
  /// and leaves the session usable.
  AdapterMessage request(nlohmann::json message, const std::vector<at::Tensor>& tensors, const std::string& answer_type,
                         const std::string& what);
  /// A new model id (unique among all the processes sharing the session), counted as held by
  /// the adapter until drop_model().
  int64_t open_model();
  /// Tells the adapter to drop the model (no answer; failures are ignored: the session is then dead).
  void drop_model(int64_t model_id);

  /// No failure so far (here or in a child that borrowed it) and no request left unanswered.
  bool usable() const;
  /// usable(), still running, and holding no model: fit to lend to the next forked child.
  bool idle();
  const nlohmann::json& hello_answer() const { return hello_answer_; }
  const AdapterSpec& spec() const { return spec_; }

 private:
  [[noreturn]] void fail(AdapterFailure::Kind kind, const std::string& message);
  void write(const std::string& bytes, const std::string& what, AdapterProcess::Clock::time_point deadline);
  std::string read(size_t n, const std::string& what, AdapterProcess::Clock::time_point deadline);
  AdapterMessage receive(const std::string& what, AdapterProcess::Clock::time_point deadline);

  struct Shared;  // in memory shared with forked children (MAP_SHARED)

  AdapterSpec spec_;
  std::shared_ptr<Shared> shared_;
  std::unique_ptr<AdapterProcess> process_;
  nlohmann::json hello_answer_;
  bool dead_ = false;
};

/// The session of `spec` with this hello in this process: the running one, or a new one when
/// there is none or it failed. Throws AdapterFailure when a new one cannot be started.
std::shared_ptr<AdapterSession> adapter_session(const AdapterSpec& spec, const nlohmann::json& hello);

/// adapter_session() for a process about to fork children that borrow it: the session, restarted
/// when it is not idle(). A session that cannot start is left for the children to report.
void keep_adapter_session(const AdapterSpec& spec, const nlohmann::json& hello);

/// Ends every adapter this process started (reaped, scratch folders removed): for a process that
/// leaves through _exit, which runs no destructors.
void close_adapter_sessions();

/// "adapter ts-freeze crashed ...\n  its stderr ended with:\n    ..." for logs and reports.
std::string describe_failure(const AdapterFailure& failure);

}  // namespace gbc
