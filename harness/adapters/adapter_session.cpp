#include "harness/adapters/adapter_session.h"

#include <unistd.h>

#include <map>
#include <sstream>

#include "harness/adapters/adapter_frames.h"

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

}  // namespace

AdapterSession::AdapterSession(const AdapterSpec& spec, const nlohmann::json& hello) : spec_(spec) {
  size_t memory = 0;
  if (spec.memory_mb > 0 && hello.value("device", "cpu") != "cuda") memory = static_cast<size_t>(spec.memory_mb) << 20;
  try {
    process_ = AdapterProcess::start(spec.command, memory);
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

bool AdapterSession::usable() const { return !dead_ && process_ && process_->owner() == ::getpid(); }

void AdapterSession::fail(AdapterFailure::Kind kind, const std::string& message) {
  dead_ = true;
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
  write(bytes, what, deadline);
  AdapterMessage answer = receive(what, deadline);
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

void AdapterSession::notify(const nlohmann::json& message) {
  if (!usable()) return;
  try {
    write(encode_control(message), std::string(message.value("type", "message")), after(spec_.timeout_s));
  } catch (const AdapterFailure&) {
  }
}

std::shared_ptr<AdapterSession> adapter_session(const AdapterSpec& spec, const nlohmann::json& hello) {
  static std::map<std::string, std::shared_ptr<AdapterSession>> sessions;
  const std::string key = spec.name + "\n" + hello.dump();
  std::shared_ptr<AdapterSession>& s = sessions[key];
  if (!s || !s->usable()) s = std::make_shared<AdapterSession>(spec, hello);
  return s;
}

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
