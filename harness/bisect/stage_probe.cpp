#include "harness/bisect/stage_probe.h"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "harness/sandbox/sandbox.h"

namespace gbc {
namespace {

std::string failure_summary(const CaseFailure& f) {
  std::string s = "case " + std::to_string(f.index) + ": ";
  if (!f.error.empty()) return s + "raised: " + f.error;
  if (f.outputs.empty()) return s + "failed";
  const OutputCheck& o = f.outputs.front();
  s += OutputCheck::kind_name(o.kind) + " " + o.output + " failed " + o.oracle;
  if (!o.detail.empty()) s += " (" + o.detail + ")";
  return s;
}

nlohmann::json check_in_child(const Model& model, const std::string& backend, const ProbeOptions& options) {
  RunOptions opt = options.run;
  opt.backends = {backend};
  opt.max_shrink_tries = 0;
  opt.on_progress = nullptr;
  for (const auto& p : options.disabled_passes) opt.backend_options.disabled_passes.push_back(p);
  CheckReport report = run_check(model, opt);
  nlohmann::json j;
  if (!report.eager_error.empty()) {
    j["eager_error"] = report.eager_error;
    return j;
  }
  const BackendReport& b = report.backends.at(0);
  j["diverged"] = b.cases_failed > 0;
  j["case"] = b.failures.empty() ? -1 : b.failures.front().index;
  j["summary"] = b.failures.empty() ? std::string("pass") : failure_summary(b.failures.front());
  return j;
}

}  // namespace

ProbeResult probe_backend(const Model& model, const std::string& backend, const ProbeOptions& options) {
  SandboxLimits limits;
  limits.timeout_s = options.timeout_s;
  SandboxResult r = run_sandboxed([&] { return check_in_child(model, backend, options); }, limits);
  ProbeResult out;
  switch (r.status) {
    case SandboxResult::Status::Ok: break;
    case SandboxResult::Status::Exception:
      throw std::runtime_error("checking " + backend + " failed: " + r.exception_type + ": " + r.error);
    default:
      out.diverged = true;
      out.crashed = true;
      out.summary = "the check died: " + r.summary();
      return out;
  }
  if (r.value.contains("eager_error"))
    throw std::runtime_error("the eager reference fails on this model's inputs: " + r.value["eager_error"].get<std::string>());
  out.diverged = r.value.at("diverged").get<bool>();
  out.failing_case = r.value.at("case").get<int>();
  out.summary = r.value.at("summary").get<std::string>();
  return out;
}

}  // namespace gbc
