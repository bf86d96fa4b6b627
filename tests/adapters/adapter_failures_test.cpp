// harness/adapters/adapter_backend.h and adapter_session.h through the built gbcheck, as a user
// runs it: the docs' example adapter passes a corpus model, and an adapter that crashes, hangs,
// answers with the wrong number of outputs, truncates a tensor, writes garbage or runs out of
// memory fails the check (exit 1) with its own message, never crashes gbcheck and never passes.
// Adapters from tests/data/adapters/backends.yaml.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tests/support/run_command.h"

namespace gbc {
namespace {

testing::CommandResult gbcheck(const std::string& args) {
  return testing::run_command("cd " + std::string(GBCHECK_SOURCE_DIR) + " && " + testing::built_binary("gbcheck") +
                              " " + args + " --backends-config tests/data/adapters/backends.yaml");
}

// One case, one backend: each broken adapter fails that case.
testing::CommandResult check_with(const std::string& backend) {
  return gbcheck("check corpus/examples/elementwise_chain.yaml --cases 1 --backend " + backend);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(AdapterFailures, TheExampleAdapterPasses) {
  testing::CommandResult r = gbcheck("check corpus/examples/mlp.yaml --cases 3 --backend eager-py");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "eager-py")) << r.output;
}

TEST(AdapterFailures, ACrashIsAFailureWithItsSignalAndStderr) {
  testing::CommandResult r = check_with("broken-crash");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "adapter broken-crash crashed during case 1: killed by SIGSEGV (signal 11)")) << r.output;
  EXPECT_TRUE(has(r.output, "broken adapter: about to crash")) << r.output;  // its stderr
  EXPECT_TRUE(has(r.output, "not shrunk")) << r.output;
}

TEST(AdapterFailures, AHangIsATimeout) {
  auto start = std::chrono::steady_clock::now();
  testing::CommandResult r = check_with("broken-hang");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "adapter broken-hang timed out: no answer to case 1 within 5 s")) << r.output;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(120));
}

TEST(AdapterFailures, AWrongOutputCountIsAProtocolError) {
  testing::CommandResult r = check_with("broken-count");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "adapter broken-count protocol error: answered case 1 with 2 tensors, expected 1 output")) << r.output;
}

TEST(AdapterFailures, ATruncatedTensorIsAProtocolError) {
  testing::CommandResult r = check_with("broken-truncate");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "adapter broken-truncate protocol error: truncated frame in the answer to case 1")) << r.output;
}

TEST(AdapterFailures, GarbageOnTheStreamIsAProtocolError) {
  testing::CommandResult r = check_with("broken-garbage");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "adapter broken-garbage protocol error in the answer to case 1: bad frame: expected the magic GBAD, got 'Trac'"))
      << r.output;
}

TEST(AdapterFailures, RunningOutOfMemoryIsNamed) {
  testing::CommandResult r = check_with("broken-oom");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "adapter broken-oom ran out of memory (memory_mb 3072) in case 1")) << r.output;
}

TEST(AdapterFailures, AnAdapterThatCannotStartIsAFailureToo) {
  testing::CommandResult r = check_with("no-such-program");
  EXPECT_EQ(r.exit_code, 4) << r.output;  // its probe cannot run: the environment lacks it
  EXPECT_TRUE(has(r.output, "command line: error: backend no-such-program cannot run here: its adapter does not start: "
                            "cannot run '/nonexistent/adapter': No such file or directory"))
      << r.output;
}

}  // namespace
}  // namespace gbc
