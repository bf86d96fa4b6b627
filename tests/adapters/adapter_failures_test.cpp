// harness/adapters/adapter_backend.h and adapter_session.h through the built gbcheck, as a user
// runs it: the docs' example adapter passes a corpus model, and an adapter that crashes, hangs,
// answers with the wrong number of outputs, truncates a tensor, writes garbage or runs out of
// memory fails the check (exit 1) with its own message, never crashes gbcheck and never passes.
// Inputs come back from the adapter only where the model writes them; a write elsewhere is caught.
// Outputs are checked against the graph retyped for the case's input dtypes.
// An adapter is also a reference (--reference): gbc against the example adapter passes, and a
// broken reference fails the check under its name. A reduction through an adapter keeps one
// adapter across its candidates. Adapters from tests/data/adapters/backends.yaml.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace gbc {
namespace {

testing::CommandResult gbcheck(const std::string& args, const std::string& env = "") {
  return testing::run_command("cd " + std::string(GBCHECK_SOURCE_DIR) + " && " + env + testing::built_binary("gbcheck") +
                              " " + args + " --backends-config tests/data/adapters/backends.yaml");
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(AdapterFailures, TheExampleAdapterPasses) {
  testing::CommandResult r = gbcheck("check corpus/examples/mlp.yaml --cases 3 --backend eager-py");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "eager-py  PASS  3/3 cases")) << r.output;
}

// Each broken adapter, on one case: the check fails (exit 1) with the failure's own message in
// the report, the failure is not shrunk (each try would start the adapter again), and what the
// adapter wrote to stderr is shown.
TEST(AdapterFailures, EachWayOfFailingHasItsOwnMessage) {
  struct Way {
    const char* backend;
    const char* message;
    const char* stderr_line;  // "" when the adapter writes nothing there
  };
  const std::vector<Way> ways = {
      {"broken-crash", "adapter broken-crash crashed during case 1: killed by SIGSEGV (signal 11)", "broken adapter: about to crash"},
      {"broken-hang", "adapter broken-hang timed out: no answer to case 1 within 5 s", ""},
      {"broken-count", "adapter broken-count protocol error: answered case 1 with 2 tensors, expected 1 output", ""},
      {"broken-truncate", "adapter broken-truncate protocol error: truncated frame in the answer to case 1: 8233 of 16425 bytes came "
                          "before it exited with status 0", ""},
      {"broken-garbage", "adapter broken-garbage protocol error in the answer to case 1: bad frame: expected the magic GBAD, got 'Trac'", ""},
      {"broken-oom", "adapter broken-oom ran out of memory (memory_mb 3072) in case 1: MemoryError", "MemoryError"},
  };
  for (const Way& w : ways) {
    auto start = std::chrono::steady_clock::now();
    testing::CommandResult r = gbcheck("check corpus/examples/elementwise_chain.yaml --cases 1 --backend " + std::string(w.backend));
    EXPECT_EQ(r.exit_code, 1) << w.backend << ":\n" << r.output;
    EXPECT_TRUE(has(r.output, std::string("    raised: ") + w.message)) << w.backend << ":\n" << r.output;
    EXPECT_TRUE(has(r.output, "not shrunk: " + std::string(w.backend) + "'s process failed")) << r.output;
    EXPECT_TRUE(has(r.output, w.stderr_line)) << r.output;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(120)) << w.backend;
  }
}

// Only the inputs the model writes are copied back from the adapter's answer. The fuzzer's
// ts-freeze "raise" (seeds 200/203/205) was gbcheck copying into an expanded input (stride 0)
// that only an in-place op on the pooling's output, never on the input, had made "mutating".
TEST(AdapterFailures, InputsTheModelNeverWritesMayBeAnyView) {
  testing::CommandResult r = gbcheck("check tests/data/adapters/writes_own_value.yaml --inputs tests/data/adapters/expanded_input.json "
                                     "--cases 1 --backend eager-py");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "eager-py  PASS  2/2 cases")) << r.output;
}

// An adapter that gives back changed an input the model only reads is caught, and one it writes
// is still judged as the model left it.
TEST(AdapterFailures, AWriteIntoAnInputTheModelOnlyReadsIsCaught) {
  testing::CommandResult r = gbcheck("check tests/data/adapters/writes_one_input.yaml --cases 1 --backend broken-scribble");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(has(r.output, "input y after the run [state]: the path wrote into y, which the model never writes")) << r.output;
  EXPECT_TRUE(has(r.output, "input x after the run [state]: tolerance: 6/6 elements differ")) << r.output;
  testing::CommandResult good = gbcheck("check tests/data/adapters/writes_one_input.yaml --cases 3 --backend eager-py");
  EXPECT_EQ(good.exit_code, 0) << good.output;
}

// A case that calls the model with an input's `dtypes:` alternative (float64 for float32) gets
// outputs of the retyped graph's dtypes, not a protocol error (the fuzz's seed 201 on ts-freeze).
TEST(AdapterFailures, OutputsFollowTheCasesInputDtypes) {
  testing::CommandResult r = gbcheck("check tests/data/adapters/dtype_variants.yaml --backend eager-py");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "eager-py  PASS  5/5 cases")) << r.output;
}

TEST(AdapterFailures, AnAdapterThatCannotStartIsAFailureToo) {
  testing::CommandResult r = gbcheck("check corpus/examples/elementwise_chain.yaml --cases 1 --backend no-such-program");
  EXPECT_EQ(r.exit_code, 4) << r.output;  // its probe cannot run: the environment lacks it
  EXPECT_TRUE(has(r.output, "command line: error: backend no-such-program cannot run here: its adapter does not start: "
                            "cannot run '/nonexistent/adapter': No such file or directory"))
      << r.output;
}

TEST(AdapterFailures, AnAdapterCanBeTheReference) {
  const std::string json = std::string(GBCHECK_BINARY_DIR) + "/adapter-reference.json";
  testing::CommandResult r =
      gbcheck("check corpus/examples/mlp.yaml --cases 3 --backend gbc --reference eager-py --json " + json);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "| cpu | reference eager-py | seed 0 |")) << r.output;
  EXPECT_TRUE(has(r.output, "gbc  PASS  3/3 cases")) << r.output;
  std::ifstream file(json);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(has(text, "\"reference\": \"eager-py\"")) << text;

  testing::CommandResult broken =
      gbcheck("check corpus/examples/elementwise_chain.yaml --cases 1 --backend gbc --reference broken-count");
  EXPECT_EQ(broken.exit_code, 1) << broken.output;
  EXPECT_TRUE(has(broken.output, "error: the broken-count reference failed on case 0: adapter broken-count protocol error: "
                                 "answered case 1 with 2 tensors, expected 1 output"))
      << broken.output;

  testing::CommandResult unknown = gbcheck("check corpus/examples/mlp.yaml --backend gbc --reference eager-pi");
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_TRUE(has(unknown.output, "command line: error: --reference: unknown backend 'eager-pi'; hint: did you mean 'eager-py'?"))
      << unknown.output;
}

// Every candidate of a reduction is checked in its own child, which borrows the adapter that the
// reducer keeps running (as fuzz does): one adapter start for the whole reduction, not one per
// candidate. broken-wrong diverges on every model, so every candidate is checked.
TEST(AdapterFailures, AReductionKeepsOneAdapterAcrossItsCandidates) {
  testing::TempDir dir("adapter-reduce");
  const std::string starts = dir.path("starts");
  testing::CommandResult r = gbcheck("reduce corpus/examples/mlp.yaml --backend broken-wrong --max-checks 12 --out " + dir.path("out"),
                                     "GBCHECK_TEST_ADAPTER_STARTS=" + starts + " ");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(has(r.output, "checks:   12 (")) << r.output;
  std::ifstream file(starts);
  std::vector<std::string> pids;
  for (std::string line; std::getline(file, line);) pids.push_back(line);
  EXPECT_EQ(pids.size(), 1u) << "adapter starts (pids) for 12 checks:\n" << r.output;
}

}  // namespace
}  // namespace gbc
