// harness/adapters/adapter_process.h: a child with piped stdin/stdout answers within deadlines;
// a hang is a timeout, a signal is reported by name, stderr is kept, a missing program is an
// error at start, and the process group is gone after kill_and_reap. Its scratch folder
// ($GBCHECK_ADAPTER_SCRATCH) is gone once it has ended, however it ended: killed, exited by
// itself, or killed along with a sandboxed child that a timeout ended (harness/sandbox).
#include "harness/adapters/adapter_process.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "harness/sandbox/sandbox.h"

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

namespace fs = std::filesystem;

// A shell "adapter" that writes a file into its scratch folder and prints the folder.
std::vector<std::string> scratch_writer(const std::string& then) {
  return {"sh", "-c", "touch \"$GBCHECK_ADAPTER_SCRATCH/model.py\" && echo \"$GBCHECK_ADAPTER_SCRATCH\" && " + then};
}

std::string first_line(AdapterProcess& p) {
  std::string line, c;
  while (p.read_exact(1, c, in(10000)) == AdapterProcess::Io::Ok && c != "\n") line += c;
  return line;
}

TEST(AdapterProcess, ItsScratchFolderGoesWithItKilledOrNot) {
  auto killed = AdapterProcess::start(scratch_writer("sleep 60"), 0);
  const std::string folder = first_line(*killed);
  EXPECT_EQ(folder, killed->scratch());
  EXPECT_TRUE(fs::exists(folder + "/model.py")) << folder;
  killed->kill_and_reap();  // SIGKILL: nothing runs in the adapter
  EXPECT_FALSE(fs::exists(folder)) << folder;

  auto leaving = AdapterProcess::start(scratch_writer("exit 3"), 0);
  const std::string other = first_line(*leaving);
  std::string rest;
  EXPECT_EQ(leaving->read_exact(1, rest, in(10000)), AdapterProcess::Io::Closed);
  EXPECT_EQ(leaving->wait_exit(std::chrono::milliseconds(5000)), "exited with status 3");
  EXPECT_FALSE(fs::exists(other)) << other;
}

// A sandboxed child that started an adapter and was killed at its timeout runs no destructor:
// the sandbox removes the child's $TMPDIR, where the adapter's folder is.
TEST(AdapterProcess, ASandboxKilledWithItsAdapterLeavesNoFolder) {
  const std::string note = (fs::temp_directory_path() / ("gbcheck-scratch-note-" + std::to_string(::getpid()))).string();
  SandboxResult r = run_sandboxed(
      [&] {
        auto p = AdapterProcess::start(scratch_writer("sleep 60"), 0);
        std::ofstream(note) << first_line(*p) << "\n";
        std::this_thread::sleep_for(std::chrono::seconds(60));
        return nlohmann::json();
      },
      {2.0, 0});
  EXPECT_EQ(r.status, SandboxResult::Status::Timeout) << r.summary();
  std::string folder;
  std::getline(std::ifstream(note), folder);
  fs::remove(note);
  ASSERT_FALSE(folder.empty());
  EXPECT_NE(folder.find("/gbcheck-sandbox-"), std::string::npos) << folder;  // under the child's $TMPDIR
  EXPECT_FALSE(fs::exists(folder)) << folder;
  EXPECT_FALSE(fs::exists(fs::path(folder).parent_path())) << folder;
}

}  // namespace
}  // namespace gbc
