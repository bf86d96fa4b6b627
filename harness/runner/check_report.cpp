#include "harness/runner/check_report.h"

#include <algorithm>

namespace gbc {

std::vector<std::string> OutputCheck::failed_oracles() const {
  std::vector<std::string> out;
  if (!pass) out.push_back(oracle);  // the deciding oracle first
  for (const auto& v : verdicts)
    if (v.fails() && std::find(out.begin(), out.end(), v.oracle) == out.end()) out.push_back(v.oracle);
  return out;
}

std::string OutputCheck::kind_name(Kind kind) {
  switch (kind) {
    case Kind::Output: return "output";
    case Kind::State: return "state";
    case Kind::Drift: return "drift";
  }
  return "?";
}

std::string path_error_kind_name(PathErrorKind kind) {
  return kind == PathErrorKind::InternalError ? "internal-error" : "raised";
}

std::vector<std::string> CaseFailure::failed_oracles() const {
  std::vector<std::string> out;
  for (const auto& o : outputs)
    for (const auto& n : o.failed_oracles())
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

bool CheckReport::pass() const {
  if (!eager_error.empty() || no_usable_case()) return false;
  for (const auto& b : backends)
    if (!b.pass()) return false;
  return true;
}

int CheckReport::exit_code() const {
  // A compiled reference that raises is a compiler's failure, not a model the inputs cannot run.
  if (!eager_error.empty() && !eager_reference()) return kExitDivergence;
  if (!eager_error.empty() || no_usable_case()) return kExitInvalid;
  return pass() ? kExitPass : kExitDivergence;
}

std::string CheckReport::failure_summary() const {
  if (!eager_error.empty()) return "reference " + reference + " raised: " + eager_error.substr(0, eager_error.find('\n'));
  if (no_usable_case()) return "no case had a usable reference";
  std::string out;
  for (const BackendReport& b : backends) {
    if (b.pass()) continue;
    std::vector<std::string> how;
    for (const CaseFailure& f : b.failures) {
      std::vector<std::string> found = f.error.empty() ? f.failed_oracles() : std::vector<std::string>{"raised"};
      for (const std::string& h : found)
        if (std::find(how.begin(), how.end(), h) == how.end()) how.push_back(h);
    }
    if (!b.expectation_failures.empty()) how.push_back("an expectation");
    std::string what;
    for (const std::string& h : how) what += (what.empty() ? "" : ", ") + h;
    out += (out.empty() ? "" : "; ") + b.backend + (what == "raised" ? " raised" : " failed " + what);
  }
  return out;
}

std::string CheckReport::replay_command(const std::string& backend, int case_index, const std::string& shrink_path) const {
  std::string s = "gbcheck " + (model_path.empty() ? std::string("MODEL") : model_path) + " --backend " + backend +
                  (eager_reference() ? "" : " --reference " + reference) + " --seed " + std::to_string(seed) + " --case " + std::to_string(case_index);
  if (device != "cpu") s += " --device " + device;
  if (!shrink_path.empty()) s += " --shrink " + shrink_path;
  if (!injected_fault.empty()) s += " --inject-fault " + injected_fault;
  return s + given_inputs_flags(given_inputs, generated_cases);
}

std::string given_inputs_flags(const std::vector<std::string>& paths, int generated_cases) {
  std::string s;
  for (const std::string& path : paths) s += " --inputs " + path;
  if (!paths.empty()) s += " --cases " + std::to_string(generated_cases);
  return s;
}

}  // namespace gbc
