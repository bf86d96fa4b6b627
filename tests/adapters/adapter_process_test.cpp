// harness/adapters/adapter_process.h: a child with piped stdin/stdout answers within deadlines;
// a hang is a timeout, a signal is reported by name, stderr is kept, a missing program is an
// error at start, and the process group is gone after kill_and_reap.
#include "harness/adapters/adapter_process.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <stdexcept>

namespace gbc {
namespace {

using Clock = AdapterProcess::Clock;
Clock::time_point in(int ms) { return Clock::now() + std::chrono::milliseconds(ms); }

TEST(AdapterProcess, EchoesWithinItsDeadline) {
  auto p = AdapterProcess::start({"cat"}, 0);
  ASSERT_EQ(p->write_all("hello", in(5000)), AdapterProcess::Io::Ok);
  std::string out;
  ASSERT_EQ(p->read_exact(5, out, in(5000)), AdapterProcess::Io::Ok);
  EXPECT_EQ(out, "hello");
  p->kill_and_reap();
  EXPECT_EQ(p->ended_how(), "exited with status 0");  // cat leaves at the end of its input
  EXPECT_FALSE(p->crashed());
}

TEST(AdapterProcess, SilenceIsATimeout) {
  auto p = AdapterProcess::start({"sleep", "30"}, 0);
  std::string out;
  auto start = Clock::now();
  EXPECT_EQ(p->read_exact(1, out, in(200)), AdapterProcess::Io::Timeout);
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  pid_t pid = p->pid();
  p->kill_and_reap();
  EXPECT_EQ(p->ended_how(), "killed by gbcheck");
  EXPECT_NE(::kill(pid, 0), 0);  // gone
}

TEST(AdapterProcess, ACrashIsNamedAndItsStderrKept) {
  auto p = AdapterProcess::start({"sh", "-c", "echo about to die >&2; kill -SEGV $$"}, 0);
  std::string out;
  EXPECT_EQ(p->read_exact(1, out, in(5000)), AdapterProcess::Io::Closed);
  EXPECT_EQ(p->wait_exit(std::chrono::milliseconds(5000)), "killed by SIGSEGV (signal 11)");
  EXPECT_TRUE(p->crashed());
  EXPECT_EQ(p->stderr_tail(), "about to die\n");
}

TEST(AdapterProcess, AnExitIsItsStatusAndPartialOutputIsKept) {
  auto p = AdapterProcess::start({"sh", "-c", "printf abc; exit 3"}, 0);
  std::string out;
  EXPECT_EQ(p->read_exact(10, out, in(5000)), AdapterProcess::Io::Closed);
  EXPECT_EQ(out, "abc");
  EXPECT_EQ(p->wait_exit(std::chrono::milliseconds(5000)), "exited with status 3");
  // Writing to it now fails as Closed, and does not kill gbcheck with SIGPIPE.
  EXPECT_EQ(p->write_all(std::string(1 << 20, 'x'), in(5000)), AdapterProcess::Io::Closed);
}

TEST(AdapterProcess, AMissingProgramCannotStart) {
  try {
    AdapterProcess::start({"/nonexistent/adapter"}, 0);
    FAIL() << "started";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot run '/nonexistent/adapter': No such file or directory");
  }
}

TEST(AdapterProcess, TheMemoryLimitApplies) {
  // 64 MiB of data segment: allocating 512 MiB fails inside the child.
  auto p = AdapterProcess::start({"/usr/bin/python3", "-c", "b = bytearray(1 << 29)"}, size_t{64} << 20);
  std::string out;
  EXPECT_EQ(p->read_exact(1, out, in(30000)), AdapterProcess::Io::Closed);
  EXPECT_EQ(p->wait_exit(std::chrono::milliseconds(30000)), "exited with status 1");
  EXPECT_NE(p->stderr_tail().find("MemoryError"), std::string::npos) << p->stderr_tail();
}

}  // namespace
}  // namespace gbc
