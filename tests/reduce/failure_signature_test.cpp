// Tests of failure signatures (harness/reduce/failure_signature.h): the stable text and hash, what
// counts as the same failure, the ops involved in a divergence, error normalization, JSON.
#include "harness/reduce/failure_signature.h"

#include <gtest/gtest.h>

#include "harness/model/model_loader.h"

namespace gbc {
namespace {

using Kind = FailureSignature::Kind;

FailureSignature sig(std::string backend, Kind kind, std::string detail, std::vector<std::string> ops) {
  return FailureSignature{std::move(backend), kind, std::move(detail), std::move(ops)};
}

TEST(FailureSignature, HasAStableTextAndHash) {
  FailureSignature s = sig("gbc", Kind::Divergence, "fp64,tolerance", {"sin", "tanh"});
  EXPECT_EQ(s.str(), "gbc divergence fp64,tolerance [sin,tanh]");
  // FNV-1a 64 of the text (computed independently): the same on every machine and in every run.
  EXPECT_EQ(s.hash(), "ba8955f622be6461");
  EXPECT_EQ(sig("gbc", Kind::Timeout, "", {"exp"}).str(), "gbc timeout [exp]");
}

TEST(FailureSignature, SameFailureIgnoresTheOpsButNotTheKind) {
  FailureSignature a = sig("gbc", Kind::Divergence, "tolerance", {"add", "sin", "tanh"});
  EXPECT_TRUE(a.same_failure(sig("gbc", Kind::Divergence, "tolerance", {"tanh"})));
  EXPECT_FALSE(a == sig("gbc", Kind::Divergence, "tolerance", {"tanh"}));
  EXPECT_FALSE(a.same_failure(sig("gbc", Kind::Crash, "SIGSEGV", {"tanh"})));
  EXPECT_FALSE(a.same_failure(sig("nnc", Kind::Divergence, "tolerance", {"tanh"})));
  EXPECT_FALSE(a.same_failure(sig("gbc", Kind::Divergence, "nan_inf", {"tanh"})));
}

TEST(FailureSignature, RoundTripsThroughJson) {
  FailureSignature a = sig("gbc", Kind::Error, "tanh: index N out of range", {"tanh"});
  nlohmann::json j = a.to_json();
  EXPECT_EQ(j["hash"], a.hash());
  EXPECT_TRUE(FailureSignature::from_json(j) == a);
}

TEST(FailureSignature, KindsKeepTheirNamesInTextAndJson) {
  const std::vector<std::pair<Kind, std::string>> names = {
      {Kind::Divergence, "divergence"}, {Kind::Error, "error"}, {Kind::InternalError, "internal-error"},
      {Kind::Crash, "crash"},           {Kind::Timeout, "timeout"},
      {Kind::Oom, "oom"},               {Kind::GraphBreak, "graph-break"},               {Kind::Generator, "generator"}};
  for (const auto& [kind, name] : names) {
    EXPECT_EQ(FailureSignature::kind_name(kind), name);
    EXPECT_EQ(FailureSignature::kind_from_name(name), kind) << name;
    FailureSignature s = sig("gbc", kind, "d", {"exp"});
    EXPECT_EQ(s.str(), "gbc " + name + " d [exp]");
    EXPECT_EQ(s.to_json()["kind"], name);
    EXPECT_EQ(FailureSignature::from_json(s.to_json()).kind, kind);
  }
  EXPECT_EQ(FailureSignature::kind_from_name("mismatch"), std::nullopt);
  nlohmann::json unknown = sig("gbc", Kind::Crash, "SIGSEGV", {}).to_json();
  unknown["kind"] = "segfault";
  EXPECT_THROW(FailureSignature::from_json(unknown), std::invalid_argument);
}

TEST(FailureSignature, NormalizesErrorsToWhatStaysTheSame) {
  EXPECT_EQ(normalize_error("chain.yaml:12:7: matmul: sizes 3x4 and 5x6\nmore detail"), "matmul: sizes NxN and NxN");
  EXPECT_EQ(normalize_error("<candidate>:3:5: matmul: sizes 1x2 and 7x6"), "matmul: sizes NxN and NxN");
  EXPECT_EQ(normalize_error("plain error 42"), "plain error N");
}

TEST(FailureSignature, OpsInvolvedFollowTheFailingOutputBack) {
  Model m = load_model_text(
      "format: gbcheck/v1\ninputs:\n  x: {shape: [4], dtype: float32}\ngraph:\n"
      "  - {id: a, op: sin, args: [x]}\n  - {id: b, op: tanh, args: [a]}\n  - {id: c, op: exp, args: [x]}\n"
      "outputs: [b, c]\n",
      "m.yaml");
  EXPECT_EQ(ops_involved(m, {"b"}), (std::vector<std::string>{"sin", "tanh"}));
  EXPECT_EQ(ops_involved(m, {"c"}), (std::vector<std::string>{"exp"}));
  EXPECT_EQ(all_ops(m), (std::vector<std::string>{"exp", "sin", "tanh"}));
  OutputCheck failing;
  failing.output = "b";
  failing.pass = false;
  Verdict v;
  v.oracle = "tolerance";
  v.pass = false;
  failing.verdicts = {v};
  FailureSignature s = signature_of_divergence(m, "gbc", {failing});
  EXPECT_EQ(s.str(), "gbc divergence tolerance [sin,tanh]");
}

TEST(FailureSignature, NamesCrashesBySignal) {
  Model m = load_model_text("format: gbcheck/v1\ninputs:\n  x: {shape: [4]}\ngraph:\n  - {id: a, op: exp, args: [x]}\noutputs: [a]\n",
                            "m.yaml");
  SandboxResult crash;
  crash.status = SandboxResult::Status::Crash;
  crash.signal = 11;
  crash.signal_name = "SIGSEGV";
  EXPECT_EQ(signature_of_sandbox(m, "gbc", crash).str(), "gbc crash SIGSEGV [exp]");
  SandboxResult hang;
  hang.status = SandboxResult::Status::Timeout;
  EXPECT_EQ(signature_of_sandbox(m, "gbc", hang).str(), "gbc timeout [exp]");
}

}  // namespace
}  // namespace gbc
