#include "harness/adapters/adapter_session.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <sstream>

#include "harness/adapters/adapter_frames.h"
#include "harness/adapters/adapter_python.h"

namespace gbc {
namespace {

using Clock = AdapterProcess::Clock;

Clock::time_point after(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string seconds_text(double s) {
  std::ostringstream o;
  o << s << " s";
  return o.str();
}

// This process's sessions, by backend and hello.
std::map<std::string, std::shared_ptr<AdapterSession>>& sessions() {
  static std::map<std::string, std::shared_ptr<AdapterSession>> all;
  return all;
}

std::shared_ptr<AdapterSession>& session_slot(const AdapterSpec& spec, const nlohmann::json& hello) {
  return sessions()[spec.name + "\n" + hello.dump()];
}

}  // namespace

// Lock-free atomics work across processes that map the same page.
struct AdapterSession::Shared {
  std::atomic<int64_t> next_model_id{1};
  std::atomic<int64_t> open_models{0};
  std::atomic<bool> busy{false};    // a request was sent and its answer not yet read
  std::atomic<bool> failed{false};  // fail() ran: the adapter is dead or out of step
};

AdapterSession::AdapterSession(const AdapterSpec& spec, const nlohmann::json& hello) : spec_(spec) {
  void* page = ::mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) throw AdapterFailure(AdapterFailure::Kind::Start, "adapter " + spec.name + " did not start: no shared page", "");
  shared_ = std::shared_ptr<Shared>(new (page) Shared, [](Shared* s) { ::munmap(s, sizeof(Shared)); });
  size_t memory = 0;
  if (spec.memory_mb > 0 && hello.value("device", "cpu") != "cuda") memory = static_cast<size_t>(spec.memory_mb) << 20;
  try {
    process_ = AdapterProcess::start(with_adapter_python(spec.command), memory);
  } catch (const std::runtime_error& e) {
    throw AdapterFailure(AdapterFailure::Kind::Start, "adapter " + spec.name + " did not start: " + e.what(), "");
  }
  auto deadline = after(spec.startup_timeout_s);
  nlohmann::json h = hello;
  h["type"] = "hello";
  h["protocol"] = kAdapterProtocol;
  write(encode_control(h), "hello", deadline);
  AdapterMessage answer = receive("hello", deadline);
  if (answer.control["type"] == "error")
    fail(AdapterFailure::Kind::Start, "adapter " + spec.name + " refused the hello: " + answer.control.value("message", "(no message)"));
  if (answer.control["type"] != "hello" || answer.control.value("protocol", "") != kAdapterProtocol)
    fail(AdapterFailure::Kind::Start, "adapter " + spec.name + " does not speak " + kAdapterProtocol + ": it answered hello with " +
                                          answer.control.dump().substr(0, 200));
  hello_answer_ = answer.control;
}

bool AdapterSession::usable() const { return !dead_ && process_ && !shared_->failed && !shared_->busy; }

bool AdapterSession::idle() { return usable() && shared_->open_models == 0 && process_->running(); }

int64_t AdapterSession::open_model() {
  ++shared_->open_models;
  return shared_->next_model_id++;
}

void AdapterSession::fail(AdapterFailure::Kind kind, const std::string& message) {
  dead_ = true;
  shared_->failed = true;
  std::string tail;
  if (process_) {
    process_->kill_and_reap();
    tail = process_->stderr_tail();
  }
  throw AdapterFailure(kind, message, tail);
}

void AdapterSession::write(const std::string& bytes, const std::string& what, Clock::time_point deadline) {
  switch (process_->write_all(bytes, deadline)) {
    case AdapterProcess::Io::Ok: return;
    case AdapterProcess::Io::Timeout:
      fail(AdapterFailure::Kind::Timeout, "adapter " + spec_.name + " timed out: it took no input for " + what + " within " +
                                              seconds_text(spec_.timeout_s) + " (timeout_s)");
    case AdapterProcess::Io::Closed: break;
  }
  std::string how = process_->wait_exit(std::chrono::milliseconds(2000));
  fail(process_->crashed() ? AdapterFailure::Kind::Crash : AdapterFailure::Kind::Exit,
       "adapter " + spec_.name + (process_->crashed() ? " crashed" : " quit") + " before " + what + ": " + how);
}

std::string AdapterSession::read(size_t n, const std::string& what, Clock::time_point deadline) {
  std::string out;
  switch (process_->read_exact(n, out, deadline)) {
    case AdapterProcess::Io::Ok: return out;
    case AdapterProcess::Io::Timeout:
      fail(AdapterFailure::Kind::Timeout, "adapter " + spec_.name + " timed out: no answer to " + what + " within " +
                                              seconds_text(what == "hello" ? spec_.startup_timeout_s : spec_.timeout_s) +
                                              (out.empty() ? "" : " (" + std::to_string(out.size()) + " of " + std::to_string(n) + " bytes came)"));
    case AdapterProcess::Io::Closed: break;
  }
  std::string how = process_->wait_exit(std::chrono::milliseconds(2000));
  if (process_->crashed())
    fail(AdapterFailure::Kind::Crash, "adapter " + spec_.name + " crashed during " + what + ": " + how);
  if (!out.empty())
    fail(AdapterFailure::Kind::Protocol, "adapter " + spec_.name + " protocol error: truncated frame in the answer to " + what + ": " +
                                             std::to_string(out.size()) + " of " + std::to_string(n) + " bytes came before it " + how);
  fail(AdapterFailure::Kind::Exit, "adapter " + spec_.name + " quit during " + what + ": " + how);
}

AdapterMessage AdapterSession::receive(const std::string& what, Clock::time_point deadline) {
  AdapterMessage m;
  try {
    FrameHeader h = decode_frame_header(read(kFrameHeaderSize, what, deadline));
    if (h.kind != 'J') throw ProtocolError("expected a control frame, got a tensor frame");
    m.control = decode_control(read(h.length, what, deadline));
    const nlohmann::json count = m.control.value("tensors", nlohmann::json(0));
    if (!count.is_number_integer() || count.get<int64_t>() < 0 || count.get<int64_t>() > 100000)
      throw ProtocolError("\"tensors\" is not a count: " + count.dump());
    for (int64_t i = 0; i < count.get<int64_t>(); ++i) {
      FrameHeader th = decode_frame_header(read(kFrameHeaderSize, what, deadline));
      if (th.kind != 'T') throw ProtocolError("tensor " + std::to_string(i) + " of " + count.dump() + ": expected a tensor frame, got a control frame");
      try {
        m.tensors.push_back(decode_tensor(read(th.length, what, deadline)));
      } catch (const ProtocolError& e) {
        throw ProtocolError("tensor " + std::to_string(i) + ": " + e.what());
      }
    }
  } catch (const ProtocolError& e) {
    fail(AdapterFailure::Kind::Protocol, "adapter " + spec_.name + " protocol error in the answer to " + what + ": " + e.what());
  }
  return m;
}

AdapterMessage AdapterSession::request(nlohmann::json message, const std::vector<at::Tensor>& tensors,
                                       const std::string& answer_type, const std::string& what) {
  if (!usable()) fail(AdapterFailure::Kind::Exit, "adapter " + spec_.name + " is not running (it failed before)");
  auto deadline = after(spec_.timeout_s);
  message["tensors"] = tensors.size();
  std::string bytes = encode_control(message);
  for (const auto& t : tensors) bytes += encode_tensor(t);
  shared_->busy = true;
  write(bytes, what, deadline);
  AdapterMessage answer = receive(what, deadline);
  shared_->busy = false;
  const std::string type = answer.control["type"];
  if (type == "error") {
    std::string msg = answer.control.value("message", "(no message)");
    msg = msg.substr(0, msg.find('\n'));
    bool oom = answer.control.value("kind", "") == "oom";
    throw AdapterFailure(oom ? AdapterFailure::Kind::OutOfMemory : AdapterFailure::Kind::Raised,
                         oom ? "adapter " + spec_.name + " ran out of memory (memory_mb " + std::to_string(spec_.memory_mb) + ") in " + what + ": " + msg
                             : spec_.name + " raised in " + what + ": " + msg,
                         process_->stderr_tail());
  }
  if (type != answer_type)
    fail(AdapterFailure::Kind::Protocol, "adapter " + spec_.name + " protocol error: answered " + what + " with a '" + type +
                                             "' message, expected '" + answer_type + "'");
  return answer;
}

void AdapterSession::drop_model(int64_t model_id) {
  --shared_->open_models;
  if (!usable()) return;
  try {
    write(encode_control({{"type", "drop"}, {"model_id", model_id}}), "drop", after(spec_.timeout_s));
  } catch (const AdapterFailure&) {
  }
}

std::shared_ptr<AdapterSession> adapter_session(const AdapterSpec& spec, const nlohmann::json& hello) {
  std::shared_ptr<AdapterSession>& s = session_slot(spec, hello);
  if (!s || !s->usable()) s = std::make_shared<AdapterSession>(spec, hello);
  return s;
}

void keep_adapter_session(const AdapterSpec& spec, const nlohmann::json& hello) {
  std::shared_ptr<AdapterSession>& s = session_slot(spec, hello);
  if (s && s->idle()) return;
  s.reset();  // ends the old adapter before the new one starts
  try {
    s = std::make_shared<AdapterSession>(spec, hello);
  } catch (const AdapterFailure&) {
  }
}

void close_adapter_sessions() { sessions().clear(); }

std::string describe_failure(const AdapterFailure& failure) {
  std::string s = failure.what();
  if (failure.stderr_tail.empty()) return s + "\n  (its stderr was empty)";
  s += "\n  its stderr ended with:";
  std::string tail = failure.stderr_tail;
  // The last lines are the ones that say what happened.
  size_t keep = tail.size();
  int lines = 0;
  while (keep > 0 && lines < 12) {
    keep = tail.rfind('\n', keep - 1);
    if (keep == std::string::npos) {
      keep = 0;
      break;
    }
    ++lines;
  }
  std::istringstream in(tail.substr(keep));
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) s += "\n    " + line;
  return s;
}

}  // namespace gbc
