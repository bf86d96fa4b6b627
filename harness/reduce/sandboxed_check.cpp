#include "harness/reduce/sandboxed_check.h"

#include <ATen/ATen.h>

#include "compiler/aten/eager_executor.h"
#include "compiler/runtime/backend_device.h"
#include "harness/adapters/adapter_backend.h"
#include "harness/inputs/input_generator.h"
#include "harness/report/json_report.h"
#include "harness/runner/case_run.h"
#include "harness/runner/judge_plan.h"
#include "harness/runner/prepare_path.h"

namespace gbc {
namespace {

// Runs in the child: the check of one case, as a JSON outcome.
nlohmann::json judge_case(const Model& model, const std::vector<at::Tensor>& inputs, const CaseCheck& check) {
  const JudgePlan plan = make_judge_plan(model);
  const c10::Device device = backend_device(check.backend_options);
  std::unique_ptr<Backend> reference =
      check.reference ? prepare_path(*check.reference, model.graph, check.backend_options) : nullptr;
  const std::string reference_name = check.reference ? check.reference->name : "eager";
  CaseRunner runner(model, plan, device, {reference.get(), reference_name});
  std::unique_ptr<Backend> backend = prepare_path(*check.backend, model.graph, check.backend_options);

  TestCase tc;
  tc.index = check.case_index;
  tc.seed = check.case_seed;
  for (const at::Tensor& t : inputs) tc.add_given(t.to(device));
  try {
    tc.dims = bind_dims(model.graph, tc.tensors);
  } catch (const std::invalid_argument& e) {
    return {{"kind", "invalid"}, {"description", std::string("inputs do not fit the model: ") + e.what()}};
  }
  CaseResult cr = runner.run(tc, {{backend.get(), check.backend->compiled}}, nullptr);
  if (!cr.eager_error.empty()) return {{"kind", "invalid"}, {"description", reference_name + " raised: " + cr.eager_error}};
  if (!cr.unusable.empty()) return {{"kind", "invalid"}, {"description", reference_name + " disagreed with itself: " + cr.unusable}};
  const PathResult& pr = cr.paths.at(0);
  const std::string& name = check.backend->name;
  if (pr.failed()) {
    FailureSignature s = pr.error.empty() ? signature_of_divergence(model, name, pr.failing_checks())
                                          : signature_of_error(model, name, pr.error, pr.error_loc, pr.error_kind);
    std::string what = pr.error.empty() ? "diverged on "
                       : (pr.error_kind == PathErrorKind::InternalError ? "failed an internal assertion: " : "raised: ") +
                             pr.error.substr(0, pr.error.find('\n'));
    if (pr.error.empty()) {
      std::string outs;
      for (const OutputCheck& c : pr.failing_checks()) outs += (outs.empty() ? "" : ", ") + c.output + " (" + c.detail + ")";
      what += outs;
    }
    return {{"kind", "fail"}, {"signature", s.to_json()}, {"description", name + " " + what}};
  }
  if (check.fullgraph) {
    for (const CompileEvent& e : backend->stats().events) {
      if (e.kind != CompileEvent::Kind::GraphBreak) continue;
      FailureSignature s;
      s.backend = name;
      s.kind = FailureSignature::Kind::GraphBreak;
      s.detail = e.code;
      s.ops = e.op.empty() ? all_ops(model) : std::vector<std::string>{e.op};
      return {{"kind", "fail"}, {"signature", s.to_json()}, {"description", name + " breaks the graph: " + e.code + " " + e.message}};
    }
  }
  return {{"kind", "pass"}, {"description", name + " agrees with " + reference_name}};
}

}  // namespace

CaseOutcome check_case_sandboxed(const Model& model, const std::vector<at::Tensor>& inputs, const CaseCheck& check) {
  GBC_INTERNAL_ASSERT(check.backend != nullptr, "check_case_sandboxed without a backend");
  CaseOutcome out;
  // The adapters run here, across candidates: the child borrows them (adapter_backend.h), so a
  // candidate costs a compile, not an adapter's start-up.
  std::vector<std::string> paths = {check.backend->name};
  if (check.reference) paths.push_back(check.reference->name);
  keep_adapters_running(paths, check.backend_options);
  out.sandbox = run_sandboxed([&] { return judge_case(model, inputs, check); }, check.limits);
  if (!out.sandbox.ok()) {
    out.kind = CaseOutcome::Kind::Fail;
    out.signature = signature_of_sandbox(model, check.backend->name, out.sandbox);
    out.description = check.backend->name + ": " + out.sandbox.summary();
    return out;
  }
  const nlohmann::json v = std::move(out.sandbox.value);
  out.sandbox.value = nullptr;
  const std::string kind = v.at("kind").get<std::string>();
  out.description = v.value("description", "");
  if (kind == "fail") {
    out.kind = CaseOutcome::Kind::Fail;
    out.signature = FailureSignature::from_json(v.at("signature"));
  } else {
    out.kind = kind == "invalid" ? CaseOutcome::Kind::Invalid : CaseOutcome::Kind::Pass;
  }
  return out;
}

SandboxedCheck run_check_sandboxed(const Model& model, const RunOptions& options, const SandboxLimits& limits) {
  SandboxedCheck out;
  out.sandbox = run_sandboxed(
      [&] {
        CheckReport rep = run_check(model, options);
        nlohmann::json sigs = nlohmann::json::array();
        for (const BackendReport& b : rep.backends) {
          if (!b.failures.empty()) {
            sigs.push_back(signature_of_failure(model, b.backend, b.failures.front()).to_json());
          } else if (options.fullgraph && !b.expectation_failures.empty()) {
            for (const CompileEvent& e : b.stats.events) {
              if (e.kind != CompileEvent::Kind::GraphBreak) continue;
              FailureSignature s{b.backend, FailureSignature::Kind::GraphBreak, e.code, e.op.empty() ? all_ops(model) : std::vector<std::string>{e.op}};
              sigs.push_back(s.to_json());
              break;
            }
          }
        }
        return nlohmann::json{{"report", check_report_to_json(rep)}, {"exit_code", rep.exit_code()}, {"signatures", sigs}};
      },
      limits);
  if (out.sandbox.ok()) {
    out.report = std::move(out.sandbox.value["report"]);
    out.exit_code = out.sandbox.value["exit_code"].get<int>();
    for (const auto& s : out.sandbox.value["signatures"]) out.signatures.push_back(FailureSignature::from_json(s));
    out.sandbox.value = nullptr;
    return out;
  }
  if (out.sandbox.status == SandboxResult::Status::Exception && out.sandbox.exception_type == "gbc::ModelError") {
    out.exit_code = kExitInvalid;  // an invalid model or oracle selection, not a compiler failure
    return out;
  }
  out.exit_code = kExitDivergence;
  for (const std::string& b : options.backends) out.signatures.push_back(signature_of_sandbox(model, b, out.sandbox));
  return out;
}

}  // namespace gbc
