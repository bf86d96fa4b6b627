#include "harness/report/json_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace gbc {
namespace {

// JSON has no NaN/Inf: they are written as strings.
nlohmann::json num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

nlohmann::json loc_json(const SourceLoc& l) {
  if (!l.valid() && l.file.empty()) return nullptr;
  return {{"file", l.file}, {"line", l.line}, {"col", l.col}};
}

}  // namespace

nlohmann::json error_stats_to_json(const ErrorStats& s) {
  nlohmann::json j = {{"numel", s.numel},
                      {"mismatched", s.mismatched},
                      {"max_abs", num(s.max_abs)},
                      {"mean_abs", num(s.mean_abs)},
                      {"max_rel", num(s.max_rel)},
                      {"mean_rel", num(s.mean_rel)},
                      {"max_ulp", num(s.max_ulp)},
                      {"worst_index", s.worst_index},
                      {"worst_expected", num(s.worst_expected)},
                      {"worst_actual", num(s.worst_actual)},
                      {"required_rtol", num(s.required_rtol)},
                      {"required_atol", num(s.required_atol)},
                      {"tol_ratio", num(s.tol_ratio)},
                      {"stat_abs", num(s.stat_abs)},
                      {"stat_rel", num(s.stat_rel)}};
  if (s.shape_mismatch || s.dtype_mismatch) j["mismatch"] = s.mismatch_detail;
  return j;
}

nlohmann::json verdict_to_json(const Verdict& v) {
  nlohmann::json j = {{"oracle", v.oracle}, {"pass", v.pass}, {"why", v.why}, {"min_passing", v.min_passing}};
  if (!v.overruled_by.empty()) j["overruled_by"] = v.overruled_by;
  if (v.stats.numel || !v.stats.worst_index.empty() || v.stats.shape_mismatch || v.stats.dtype_mismatch)
    j["stats"] = error_stats_to_json(v.stats);
  return j;
}

nlohmann::json output_check_to_json(const OutputCheck& o) {
  nlohmann::json verdicts = nlohmann::json::array();
  for (const auto& v : o.verdicts) verdicts.push_back(verdict_to_json(v));
  // A NaN/Inf-pattern verdict measures nothing itself: the output's stats are the tolerance
  // comparison's, and no tolerance passes it (docs/json-report.md).
  ErrorStats stats = o.stats;
  const std::vector<std::string> failed = o.failed_oracles();
  if (std::find(failed.begin(), failed.end(), "nan_inf") != failed.end()) {
    for (const Verdict& v : o.verdicts)
      if (v.oracle == "tolerance" && v.stats.numel > 0) stats = v.stats;
    stats.required_rtol = stats.required_atol = std::numeric_limits<double>::infinity();
  }
  return {{"output", o.output},
          {"kind", OutputCheck::kind_name(o.kind)},
          {"oracle", o.oracle},
          {"failed_oracles", o.failed_oracles()},
          {"rtol", o.tolerance.rtol},
          {"atol", o.tolerance.atol},
          {"detail", o.detail},
          {"min_passing", o.min_passing},
          {"stats", error_stats_to_json(stats)},
          {"verdicts", verdicts}};
}

nlohmann::json drift_step_to_json(const DriftStep& s) {
  return {{"max_abs", num(s.max_abs)}, {"max_rel", num(s.max_rel)}, {"ratio", num(s.ratio)}};
}

nlohmann::json compile_event_to_json(const CompileEvent& e) {
  return {{"kind", CompileEvent::kind_name(e.kind)}, {"code", e.code}, {"message", e.message},
          {"hint", e.hint},                          {"op", e.op},     {"loc", loc_json(e.loc)}};
}

nlohmann::json backend_stats_to_json(const BackendStats& s) {
  nlohmann::json j = {{"graphs", s.graphs},
                      {"graph_breaks", s.graph_breaks},
                      {"fallbacks", s.fallbacks},
                      {"fusion_groups", s.fusion_groups},
                      {"extern_calls", s.extern_calls},
                      {"compiles", s.compiles},
                      {"recompiles", s.recompiles},
                      {"compile_ms", s.compile_ms}};
  j["events"] = nlohmann::json::array();
  for (const auto& e : s.events) j["events"].push_back(compile_event_to_json(e));
  return j;
}

nlohmann::json check_report_to_json(const CheckReport& r) {
  nlohmann::json j;
  j["schema"] = kJsonReportSchema;
  j["gbcheck_version"] = r.gbcheck_version;
  j["torch_version"] = r.torch_version;
  j["model"] = {{"name", r.model_name}, {"path", r.model_path}};
  j["device"] = r.device;
  j["reference"] = r.reference;
  j["seed"] = r.seed;
  j["cases"] = r.cases;
  j["only_case"] = r.only_case ? nlohmann::json(*r.only_case) : nlohmann::json(nullptr);
  j["only_shrink"] = r.only_case ? nlohmann::json(r.only_shrink) : nlohmann::json(nullptr);
  j["oracles"] = r.oracles;
  j["error_stat"] = r.error_stat;
  j["iterations"] = r.iterations;
  j["cases_judged"] = r.cases_judged;
  j["unusable_cases"] = nlohmann::json::array();
  for (const auto& u : r.unusable) j["unusable_cases"].push_back({{"case", u.index}, {"seed", u.seed}, {"reason", u.reason}});
  j["pass"] = r.pass();
  j["exit_code"] = r.exit_code();
  j["elapsed_ms"] = r.elapsed_ms;
  if (!r.eager_error.empty())
    j["eager_error"] = {{"message", r.eager_error}, {"loc", loc_json(r.eager_error_loc)}, {"case", r.eager_error_case}};
  j["print_output"] = r.print_output;
  j["backends"] = nlohmann::json::array();
  for (const auto& b : r.backends) {
    nlohmann::json bj = {{"name", b.backend},
                         {"pass", b.pass()},
                         {"cases_run", b.cases_run},
                         {"cases_failed", b.cases_failed},
                         {"worst_abs", num(b.worst_abs)},
                         {"worst_rel", num(b.worst_rel)},
                         {"expectation_failures", b.expectation_failures}};
    bj.update(backend_stats_to_json(b.stats));
    bj["notes"] = b.notes;
    bj["drift"] = nlohmann::json::array();
    for (const auto& d : b.drift) {
      nlohmann::json steps = nlohmann::json::array();
      for (const auto& s : d.steps) steps.push_back(drift_step_to_json(s));
      bj["drift"].push_back({{"case", d.case_index}, {"pass", d.pass}, {"steps", steps}});
    }
    bj["failures"] = nlohmann::json::array();
    for (const auto& f : b.failures) {
      nlohmann::json fj = {{"case", f.index},
                           {"seed", f.seed},
                           {"shrink_path", f.shrink_path},
                           {"dims", f.dims},
                           {"inputs", f.inputs},
                           {"failed_oracles", f.failed_oracles()},
                           {"replay", r.replay_command(b.backend, f.index, f.shrink_path)}};
      if (!f.error.empty())
        fj["error"] = {{"message", f.error}, {"loc", loc_json(f.error_loc)}, {"kind", path_error_kind_name(f.error_kind)}};
      fj["outputs"] = nlohmann::json::array();
      for (const auto& o : f.outputs) fj["outputs"].push_back(output_check_to_json(o));
      if (f.shrunk) {
        const ShrunkCase& s = *f.shrunk;
        nlohmann::json sj = {{"path", s.path},
                             {"dims", s.dims},
                             {"inputs", s.inputs},
                             {"tried", s.tried},
                             {"steps", s.steps},
                             {"budget_exhausted", s.budget_exhausted},
                             {"replay", r.replay_command(b.backend, f.index, s.path)}};
        if (!s.error.empty()) sj["error"] = {{"message", s.error}, {"loc", loc_json(s.error_loc)}};
        sj["outputs"] = nlohmann::json::array();
        for (const auto& o : s.outputs) sj["outputs"].push_back(output_check_to_json(o));
        fj["shrunk"] = sj;
      } else {
        fj["shrunk"] = nullptr;
      }
      if (!f.shrink_note.empty()) fj["shrink_note"] = f.shrink_note;
      bj["failures"].push_back(fj);
    }
    j["backends"].push_back(bj);
  }
  return j;
}

void write_json_file(const std::string& path, const nlohmann::json& json) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + path);
    out << json.dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + path);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot write " + path);
}

}  // namespace gbc
