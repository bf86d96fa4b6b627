// Tests of run_sandboxed (harness/sandbox/sandbox.h): a normal result, a thrown exception, a
// segfault, an abort, an exit without result, a hang cut off by the timeout, an allocation past
// the memory limit, and that the parent carries on after each.
#include "harness/sandbox/sandbox.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

namespace gbc {
namespace {

SandboxLimits limits(double timeout_s, size_t memory_bytes = 0) {
  SandboxLimits l;
  l.timeout_s = timeout_s;
  l.memory_bytes = memory_bytes;
  return l;
}

TEST(Sandbox, ReturnsTheFunctionsResult) {
  SandboxResult r = run_sandboxed([] { return nlohmann::json{{"answer", 42}, {"pid", ::getpid()}}; }, limits(10));
  ASSERT_EQ(r.status, SandboxResult::Status::Ok) << r.summary();
  EXPECT_EQ(r.value["answer"], 42);
  EXPECT_NE(r.value["pid"].get<int>(), ::getpid());  // it really ran in another process
  EXPECT_EQ(r.summary(), "ok");
}

TEST(Sandbox, ChildStateDoesNotLeakIntoTheParent) {
  static int counter = 0;
  run_sandboxed([] { return nlohmann::json(++counter); }, limits(10));
  EXPECT_EQ(counter, 0);
}

TEST(Sandbox, ReportsAnExceptionWithItsTypeAndText) {
  SandboxResult r = run_sandboxed([]() -> nlohmann::json { throw std::invalid_argument("bad shape [3, 4]"); }, limits(10));
  ASSERT_EQ(r.status, SandboxResult::Status::Exception) << r.summary();
  EXPECT_EQ(r.exception_type, "std::invalid_argument");
  EXPECT_EQ(r.error, "bad shape [3, 4]");
}

TEST(Sandbox, ReportsASegfaultAsACrashWithItsSignal) {
  // The signal a wild store gets, raised directly: UndefinedBehaviorSanitizer (ci/test.sh
  // --sanitize) would stop a null store before it faults.
  SandboxResult r = run_sandboxed(
      []() -> nlohmann::json {
        ::raise(SIGSEGV);
        return nullptr;
      },
      limits(10));
  ASSERT_EQ(r.status, SandboxResult::Status::Crash) << r.summary();
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.signal_name, "SIGSEGV");
  EXPECT_EQ(r.summary(), "crash SIGSEGV (signal 11)");
}

TEST(Sandbox, ReportsAnAbortAndKeepsItsStderr) {
  SandboxResult r = run_sandboxed(
      []() -> nlohmann::json {
        std::fputs("assertion failed: kernel bound\n", stderr);
        std::abort();
      },
      limits(10));
  ASSERT_EQ(r.status, SandboxResult::Status::Crash) << r.summary();
  EXPECT_EQ(r.signal_name, "SIGABRT");
  EXPECT_NE(r.stderr_tail.find("assertion failed: kernel bound"), std::string::npos);
}

TEST(Sandbox, ReportsAnExitWithoutResult) {
  SandboxResult r = run_sandboxed([]() -> nlohmann::json { std::_Exit(7); }, limits(10));
  ASSERT_EQ(r.status, SandboxResult::Status::Exited) << r.summary();
  EXPECT_EQ(r.exit_code, 7);
}

TEST(Sandbox, KillsAHangAtTheTimeout) {
  SandboxResult r = run_sandboxed(
      []() -> nlohmann::json {
        for (;;) ::pause();
      },
      limits(0.3));
  ASSERT_EQ(r.status, SandboxResult::Status::Timeout) << r.summary();
  EXPECT_GE(r.elapsed_ms, 300.0);
}

TEST(Sandbox, KillsWhatTheChildSpawnedAtTheTimeout) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  SandboxResult r = run_sandboxed(
      [&]() -> nlohmann::json {
        if (::fork() == 0) {  // a grandchild that holds the pipe's write end open while it lives
          for (;;) ::pause();
        }
        for (;;) ::pause();
      },
      limits(0.3));
  ASSERT_EQ(r.status, SandboxResult::Status::Timeout);
  ::close(fds[1]);
  // EOF within a while: every process holding the write end is gone.
  pollfd p = {fds[0], POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 5000), 1) << "the grandchild outlived the timeout";
  char c;
  EXPECT_EQ(::read(fds[0], &c, 1), 0);
  ::close(fds[0]);
}

TEST(Sandbox, ReportsAHugeAllocationAsOutOfMemory) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's allocator does not fail under the address-space limit as libc's does";
#endif
  SandboxResult r = run_sandboxed(
      []() -> nlohmann::json {
        std::vector<char> big(size_t{8} << 30);  // 8 GiB against a 256 MiB limit
        std::memset(big.data(), 1, 4096);
        return big[0];
      },
      limits(20, size_t{256} << 20));
  ASSERT_EQ(r.status, SandboxResult::Status::OutOfMemory) << r.summary();
  EXPECT_EQ(r.exception_type, "std::bad_alloc");
}

TEST(Sandbox, AllowsAllocationsWithinTheLimit) {
  SandboxResult r = run_sandboxed(
      []() -> nlohmann::json {
        std::vector<char> buf(size_t{64} << 20, 1);
        return static_cast<int>(buf[buf.size() - 1]);
      },
      limits(20, size_t{256} << 20));
  ASSERT_EQ(r.status, SandboxResult::Status::Ok) << r.summary();
  EXPECT_EQ(r.value, 1);
}

TEST(Sandbox, CarriesLargeResults) {
  SandboxResult r = run_sandboxed(
      [] {
        nlohmann::json a = nlohmann::json::array();
        for (int i = 0; i < 200000; ++i) a.push_back(i);
        return a;
      },
      limits(20));
  ASSERT_EQ(r.status, SandboxResult::Status::Ok) << r.summary();
  ASSERT_EQ(r.value.size(), 200000u);
  EXPECT_EQ(r.value[199999], 199999);
}

}  // namespace
}  // namespace gbc
