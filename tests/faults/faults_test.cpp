// Fault injection end to end: each kind of corpus/faults/ passes the default check without the
// fault and fails it with the fault, on gbc and (where the fault lives below code generation) on
// gbc-interp; the crash fault kills the check's child process with SIGSEGV in the sandbox
// (harness/sandbox/sandbox.h) while the parent survives; the assert fault (an exception inside
// gbc's lowering) is gbc's failure of kind internal-error with exit code 1, in the check, its
// reports and the fuzzer's signature, never "a bug in gbcheck". Also the registry, the kernel
// listing's mark and the command line's refusals.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "compiler/kernel/fault_injection.h"
#include "compiler/kernel/kernel_ir.h"
#include "harness/cli/inject_fault.h"
#include "harness/fuzz/campaign/graph_check.h"
#include "harness/model/model_loader.h"
#include "harness/runner/check_runner.h"
#include "harness/sandbox/sandbox.h"
#include "tests/support/single_threaded.h"

namespace gbc {
namespace {

Model fault_model(const std::string& kind) {
  return load_model_file(std::string(GBCHECK_SOURCE_DIR) + "/corpus/faults/" + kind + ".yaml");
}

CheckReport check(const Model& model, const std::string& backend, const std::string& fault) {
  RunOptions opt = run_options_from_model(model);
  opt.backends = {backend};
  opt.max_shrink_tries = 0;  // the verdict is what matters here
  opt.backend_options.inject_fault = fault;
  return run_check(model, opt);
}

class NumericFault : public ::testing::TestWithParam<std::string> {};

TEST_P(NumericFault, PassesWithoutTheFaultAndFailsWithIt) {
  const std::string kind = GetParam();
  Model model = fault_model(kind);
  for (const std::string backend : backends_with_fault(kind)) {
    SCOPED_TRACE(backend);
    CheckReport clean = check(model, backend, "");
    EXPECT_TRUE(clean.pass()) << "the model of fault " << kind << " must pass without it";
    CheckReport faulty = check(model, backend, kind);
    ASSERT_EQ(faulty.backends.size(), 1u);
    EXPECT_GT(faulty.backends[0].cases_failed, 0) << "fault " << kind << " was not caught on " << backend;
    // A replay without the fault would pass: the printed command must repeat it.
    EXPECT_NE(faulty.replay_command(backend, 0, "").find("--inject-fault " + kind), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, NumericFault,
                         ::testing::Values("const", "broadcast", "reduce-bound", "nan-drop", "fp16-accum",
                                           "guard-dtype", "guard-layout"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (c == '-') c = '_';
                           return s;
                         });

nlohmann::json sandboxed_check(const Model& model, const std::string& backend, const std::string& fault,
                               SandboxResult& result) {
  SandboxLimits limits;
  limits.timeout_s = 120;
  result = run_sandboxed([&] { return nlohmann::json(check(model, backend, fault).pass()); }, limits);
  return result.value;
}

// Runs a shell command; its exit code in `code`.
std::string run_command(const std::string& cmd, int& code) {
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// gbcheck with `args`, stdout and stderr together.
std::string run_gbcheck(const std::string& args, int& code) {
  return run_command(std::string(GBCHECK_BINARY_DIR) + "/bin/gbcheck " + args + " 2>&1", code);
}

TEST(CrashFault, KillsTheCheckingChildWithSigsegvAndThePassingRunSurvives) {
  Model model = fault_model("crash");
  SandboxResult clean;
  sandboxed_check(model, "gbc", "", clean);
  ASSERT_EQ(clean.status, SandboxResult::Status::Ok) << clean.summary();
  EXPECT_TRUE(clean.value.get<bool>());

  SandboxResult crashed;
  sandboxed_check(model, "gbc", "crash", crashed);
  EXPECT_EQ(crashed.status, SandboxResult::Status::Crash) << crashed.summary();
  EXPECT_EQ(crashed.signal, SIGSEGV);
}

// The command a user types: the check's own process dies, and says so in one FAIL line with the
// case and the commands that isolate it, exit code 1.
TEST(CrashFault, CheckCommandReportsTheCrashAndExitsOne) {
  int code = 0;
  const std::string out =
      run_gbcheck(std::string(GBCHECK_SOURCE_DIR) + "/corpus/faults/crash.yaml --backend gbc --inject-fault crash --no-cache", code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("caught SIGSEGV"), std::string::npos) << out;
  EXPECT_NE(out.find("result: FAIL: the process died while checking case 0"), std::string::npos) << out;
  EXPECT_NE(out.find("reduce:  gbcheck reduce "), std::string::npos) << out;
  EXPECT_NE(out.find("--inject-fault crash --case 0"), std::string::npos) << out;
}

// A crash keeps what the report would have said: the header line and the fault banner, only the
// result line with -q, and a --json report that says the process died (once none was written).
TEST(CrashFault, CrashKeepsHeaderQuietAndJson) {
  const std::string json = ::testing::TempDir() + "crash-report-" + std::to_string(::getpid()) + ".json";
  const std::string base = std::string(GBCHECK_BINARY_DIR) + "/bin/gbcheck " + GBCHECK_SOURCE_DIR +
                           "/corpus/faults/crash.yaml --backend gbc --inject-fault crash --no-cache";
  auto run = [](const std::string& cmd, int& code) { return run_command(cmd + " 2>/dev/null", code); };
  int code = 0;
  std::string out = run(base + " --json " + json, code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_EQ(out.rfind("*** FAULT INJECTION ACTIVE (--inject-fault crash)", 0), 0u) << out;
  EXPECT_NE(out.find("\ngbcheck 0."), std::string::npos) << out;
  EXPECT_NE(out.find(" | seed "), std::string::npos) << out;
  std::ifstream in(json);
  ASSERT_TRUE(in.good()) << "no JSON report after the crash";
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j.at("schema"), "gbcheck.report/v1");
  EXPECT_FALSE(j.at("pass").get<bool>());
  EXPECT_EQ(j.at("exit_code"), 1);
  EXPECT_EQ(j.at("crash").at("signal"), "SIGSEGV");
  EXPECT_EQ(j.at("crash").at("case"), 0);
  EXPECT_EQ(j.at("injected_fault"), "crash");
  std::filesystem::remove(json);

  out = run(base + " -q", code);
  EXPECT_EQ(code, 1) << out;
  const std::string banner = fault_banner("crash") + "\n";
  EXPECT_EQ(out, banner + "result: FAIL: caught SIGSEGV while checking case 0 of " + std::string(GBCHECK_SOURCE_DIR) +
                     "/corpus/faults/crash.yaml (backends: gbc)\n" + banner);
}

TEST(CrashFault, LeavesTheInterpreterAlone) {
  // The bug is in generated code; gbc-interp runs none.
  EXPECT_TRUE(check(fault_model("crash"), "gbc-interp", "crash").pass());
}

TEST(AssertFault, IsTheCompilersInternalErrorNotGbchecks) {
  Model model = fault_model("assert");
  for (const std::string backend : backends_with_fault("assert")) {
    SCOPED_TRACE(backend);
    EXPECT_TRUE(check(model, backend, "").pass());
    CheckReport faulty = check(model, backend, "assert");
    EXPECT_EQ(faulty.exit_code(), kExitDivergence);
    ASSERT_EQ(faulty.backends.size(), 1u);
    EXPECT_EQ(faulty.backends[0].cases_failed, 3);
    const CaseFailure& f = faulty.backends[0].failures.at(0);
    EXPECT_EQ(f.error_kind, PathErrorKind::InternalError);
    EXPECT_NE(f.error.find("--inject-fault assert"), std::string::npos) << f.error;
  }
}

TEST(AssertFault, CheckCommandExitsOneAndNamesTheBackend) {
  int code = 0;
  const std::string out = run_gbcheck(std::string(GBCHECK_SOURCE_DIR) +
                                          "/corpus/faults/assert.yaml --backend gbc --inject-fault assert --no-cache",
                                      code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("case 0 (seed"), std::string::npos) << out;
  EXPECT_NE(out.find(": internal error\n    input"), std::string::npos) << out;
  EXPECT_EQ(out.find("bug in gbcheck"), std::string::npos) << out;
}

TEST(AssertFault, FuzzSignsItUnderTheBackend) {
  GraphCheckOptions o;
  o.backends = {"gbc-interp"};
  o.backend_options.inject_fault = "assert";
  o.limits.timeout_s = 120;
  const GraphVerdict v = check_graph(fault_model("assert"), o);
  EXPECT_EQ(v.outcome, "fail");
  ASSERT_EQ(v.failures.size(), 1u);
  EXPECT_EQ(v.failures[0].signature.backend, "gbc-interp");
  EXPECT_EQ(v.failures[0].signature.kind, FailureSignature::Kind::InternalError);
  EXPECT_EQ(v.failures[0].hit.kind, "internal-error");
  EXPECT_NE(v.failures[0].hit.summary.find("failed an internal assertion"), std::string::npos) << v.failures[0].hit.summary;
}

// Found by the fuzzer: LibTorch 1.13 dies of SIGFPE on an int32 remainder of INT_MIN by -1 (the cast
// of an infinity). The death is eager's, not gbc's: it is signed under eager, which the campaign
// does not reduce (the reducer runs eager in its own process).
TEST(EagerCrash, FuzzSignsItUnderEager) {
  Model model = load_model_text(R"(format: gbcheck/v1
name: int_min_remainder
inputs:
  x: {shape: [4], values: {dist: const, value: .inf}}
graph:
  - {id: i, op: to, args: [x], dtype: int32}
  - {id: r, op: remainder, args: [i, -1]}
outputs: [r]
check:
  cases: 1
)",
                                "int_min_remainder.yaml");
  GraphCheckOptions o;
  o.backends = {"gbc-interp"};
  o.limits.timeout_s = 120;
  const GraphVerdict v = check_graph(model, o);
  EXPECT_EQ(v.outcome, "fail");
  ASSERT_EQ(v.failures.size(), 1u);
  EXPECT_EQ(v.failures[0].signature.backend, "eager");
  EXPECT_EQ(v.failures[0].signature.kind, FailureSignature::Kind::Crash);
}

TEST(FaultRegistry, NamesTheNineKindsAndParsesThem) {
  std::vector<std::string> names;
  for (const FaultKind& k : fault_kinds()) {
    names.push_back(k.name);
    ASSERT_TRUE(parse_fault(k.name).has_value());
    EXPECT_EQ(*parse_fault(k.name), k.fault);
    EXPECT_EQ(fault_name(k.fault), k.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"const", "broadcast", "reduce-bound", "nan-drop", "fp16-accum", "crash",
                                             "assert", "guard-dtype", "guard-layout"}));
  EXPECT_EQ(parse_fault(""), InjectedFault::None);
  EXPECT_FALSE(parse_fault("constant").has_value());
}

// A guard that ignores dtypes or strides is invisible while every call passes the same ones: the
// fault models pass with the fault when their variation (dtypes: lists, the recompile sequence)
// is taken away, and fail with it on.
TEST(GuardFault, CaughtOnlyWithPerCaseVariation) {
  for (const std::string kind : {"guard-dtype", "guard-layout"}) {
    SCOPED_TRACE(kind);
    Model varied = fault_model(kind);
    ASSERT_TRUE(varied.check.recompile_sequence);
    Model fixed = varied;
    fixed.check.recompile_sequence = false;
    fixed.check.layouts = "contiguous";
    for (TensorSpec& s : fixed.inputs) s.dtypes.clear();
    EXPECT_TRUE(check(fixed, "gbc", kind).pass()) << "without variation the fault cannot show";
    const CheckReport caught = check(varied, "gbc", kind);
    ASSERT_EQ(caught.backends.size(), 1u);
    EXPECT_GT(caught.backends[0].cases_failed, 0);
    // Without the fault the same calls recompile instead: a guard failed on the changed dtype or layout.
    const CheckReport clean = check(varied, "gbc", "");
    EXPECT_TRUE(clean.pass());
    EXPECT_GE(clean.backends[0].stats.recompiles, kind == "guard-dtype" ? 2 : 1);
  }
}

TEST(FaultRegistry, KernelListingNamesTheFault) {
  kir::Kernel k;
  k.name = "fused_0";
  EXPECT_EQ(kir::print_kernel(k).find("injected fault"), std::string::npos);
  k.fault = InjectedFault::NanDrop;
  EXPECT_NE(kir::print_kernel(k).find("injected fault: nan-drop"), std::string::npos);
}

TEST(InjectFaultOption, RefusesUnknownKindsAndBackendsWithoutTheFault) {
  EXPECT_EQ(check_inject_fault("bogus", {"gbc"}), std::optional<int>(kExitInvalid));
  EXPECT_EQ(check_inject_fault("const", {"nnc"}), std::optional<int>(kExitInvalid));
  EXPECT_EQ(check_inject_fault("crash", {"gbc-interp"}), std::optional<int>(kExitInvalid));
  EXPECT_EQ(check_inject_fault("crash", {"nnc", "gbc"}), std::nullopt);
  EXPECT_EQ(check_inject_fault("const", {"gbc-interp"}), std::nullopt);
}

}  // namespace
}  // namespace gbc
