#include "harness/cli/bench_output.h"

#include <algorithm>
#include <cstdio>

#include "harness/report/json_report.h"
#include "harness/runner/check_report.h"

namespace gbc {
namespace {

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string pad(std::string s, size_t width, bool right = false) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

// Three significant digits or more: 2.46, 41.3, 3871.
std::string gbs_text(double gbs) { return fmt(gbs < 10 ? "%.2f" : gbs < 100 ? "%.1f" : "%.0f", gbs); }

// What the header line says about every model of a run: how it was timed, on how many threads.
std::string settings_text(const BenchReport& rep) {
  return "warm-up " + std::to_string(rep.warmup) + ", median of " + std::to_string(rep.repeat) +
         (rep.cpu_clock ? ", process CPU time" : "") + " | LibTorch " +
         rep.torch_version + " (" + std::to_string(rep.eager_threads) + " thread" + (rep.eager_threads == 1 ? "" : "s") +
         "), gbc kernels " + std::to_string(rep.kernel_threads) + " thread" + (rep.kernel_threads == 1 ? "" : "s");
}

// Achieved GB/s as a share of the copy's.
std::string copy_share(const BenchReport& rep, const BenchResult& r) {
  const double ms = rep.traffic_ms(r);
  return rep.copy_ms > 0 && ms > 0 ? fmt("%.0f%%", 100.0 * rep.copy_ms / ms) : "-";
}

}  // namespace

void print_profiles(std::ostream& out, const BenchReport& rep) {
  for (const BenchResult& r : rep.results) {
    if (r.profile.empty()) continue;
    out << "\n" << rep.model_name << ": " << r.backend << " profile (" << rep.repeat << " runs, " << fmt("%.3f", r.profiled_ms) << " ms):\n";
    size_t width = 4;
    for (const ProfileRow& row : r.profile) width = std::max(width, row.name.size());
    width = std::min<size_t>(width, 70);
    out << "  " << pad("name", width + 2) << pad("kind", 8) << pad("calls", 8, true) << pad("total ms", 12, true)
        << pad("avg us", 12, true) << pad("% run", 8, true) << "\n";
    for (const ProfileRow& row : r.profile) {
      std::string name = row.name.size() > width ? row.name.substr(0, width - 3) + "..." : row.name;
      double pct = r.profiled_ms > 0 ? 100.0 * row.total_ms / r.profiled_ms : 0.0;
      out << "  " << pad(name, width + 2) << pad(row.kind, 8) << pad(std::to_string(row.calls), 8, true)
          << pad(fmt("%.3f", row.total_ms), 12, true) << pad(fmt("%.1f", row.avg_us()), 12, true)
          << pad(fmt("%.1f", pct), 8, true) << "\n";
    }
  }
}

void print_bench(std::ostream& out, const BenchReport& rep) {
  std::string dims;
  for (const auto& [name, value] : rep.dims) dims += (dims.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  out << "gbcheck bench | " << rep.model_name << " (" << rep.model_path << ") | " << rep.device << " | case "
      << rep.case_index << (dims.empty() ? "" : " (" + dims + ")") << " | " << settings_text(rep) << "\n";
  out << pad("backend", 12) << pad("median ms", 12, true) << pad("min ms", 12, true) << pad("speedup", 10, true)
      << pad("reused ms", 12, true) << pad("reused x", 10, true) << pad("compile ms", 12, true)
      << pad("first call ms", 15, true) << pad("graphs", 8, true) << pad("kernels", 9, true) << pad("breaks", 8, true)
      << pad("fallbacks", 11, true) << pad("GB/s", 9, true) << pad("% copy", 8, true) << "\n";
  for (const BenchResult& r : rep.results) {
    out << pad(r.backend, 12);
    if (!r.error.empty()) {
      out << "  raised: " << r.error << "\n";
      continue;
    }
    bool eager = r.backend == "eager";
    out << pad(fmt("%.3f", r.median_ms), 12, true) << pad(fmt("%.3f", r.min_ms), 12, true)
        << pad(format_speedup(r.speedup), 10, true)
        << pad(rep.outputs_reused ? fmt("%.3f", r.reused_median_ms) : "-", 12, true)
        << pad(rep.outputs_reused ? format_speedup(r.reused_speedup) : "-", 10, true)
        << pad(eager ? "-" : fmt("%.1f", r.stats.compile_ms), 12, true) << pad(fmt("%.1f", r.first_call_ms), 15, true)
        << pad(eager ? "-" : std::to_string(r.stats.graphs), 8, true)
        << pad(eager ? "-" : std::to_string(r.stats.fusion_groups), 9, true)
        << pad(eager ? "-" : std::to_string(r.stats.graph_breaks), 8, true)
        << pad(eager ? "-" : std::to_string(r.stats.fallbacks), 11, true) << pad(gbs_text(rep.gbs(rep.traffic_ms(r))), 9, true)
        << pad(copy_share(rep, r), 8, true) << "\n";
  }
  out << "reused: the same calls with outputs reused (every allocation served from memory already mapped; "
      << (rep.outputs_reused ? "bench only" : "not measured on " + rep.device) << ")\n";
  out << "GB/s: the " << fmt("%.1f", static_cast<double>(rep.bytes_moved) / (1 << 20))
      << " MiB every implementation must move (inputs read once, outputs written once) over the "
      << (rep.outputs_reused ? "reused " : "") << "median; % copy: of a copy of as many bytes into a touched buffer ("
      << fmt("%.3f", rep.copy_ms) << " ms, " << gbs_text(rep.copy_gbs()) << " GB/s)\n";
  print_profiles(out, rep);
  std::vector<std::string> failures = rep.failures();
  for (const std::string& f : failures) out << "FAIL " << f << "\n";
  out << "result: " << (failures.empty() ? "PASS" : "FAIL") << "\n";
}

nlohmann::json bench_json(const BenchReport& rep) {
  nlohmann::json j;
  j["schema"] = "gbcheck.bench/v1";
  j["gbcheck_version"] = rep.gbcheck_version;
  j["torch_version"] = rep.torch_version;
  j["model"] = {{"name", rep.model_name}, {"path", rep.model_path}};
  j["device"] = rep.device;
  j["case"] = rep.case_index;
  j["dims"] = rep.dims;
  j["warmup"] = rep.warmup;
  j["repeat"] = rep.repeat;
  j["clock"] = rep.cpu_clock ? "cpu" : "wall";
  j["eager_threads"] = rep.eager_threads;
  j["kernel_threads"] = rep.kernel_threads;
  j["bytes_moved"] = rep.bytes_moved;
  j["copy_ms"] = rep.copy_ms;
  j["copy_gbs"] = rep.copy_gbs();
  j["outputs_reused"] = rep.outputs_reused;
  j["pass"] = rep.exit_code() == kExitPass;
  j["exit_code"] = rep.exit_code();
  j["failures"] = rep.failures();
  if (rep.fullgraph) j["fullgraph"] = true;
  if (!rep.injected_fault.empty()) j["injected_fault"] = rep.injected_fault;
  j["backends"] = nlohmann::json::array();
  for (const BenchResult& r : rep.results) {
    nlohmann::json b = {{"name", r.backend},
                        {"run_ms", r.run_ms},
                        {"median_ms", r.median_ms},
                        {"min_ms", r.min_ms},
                        {"first_call_ms", r.first_call_ms},
                        {"speedup", r.speedup},
                        {"gbs", rep.gbs(r.median_ms)},
                        {"reused_run_ms", r.reused_run_ms},
                        {"reused_median_ms", r.reused_median_ms},
                        {"reused_speedup", r.reused_speedup},
                        {"reused_gbs", rep.gbs(r.reused_median_ms)},
                        {"min_speedup", r.min_speedup ? nlohmann::json(*r.min_speedup) : nlohmann::json(nullptr)},
                        {"error", r.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.error)}};
    b.update(backend_stats_to_json(r.stats));
    b["profile"] = nlohmann::json::array();
    for (const ProfileRow& row : r.profile)
      b["profile"].push_back({{"name", row.name}, {"kind", row.kind}, {"calls", row.calls}, {"total_ms", row.total_ms},
                              {"avg_us", row.avg_us()},
                              {"percent", r.profiled_ms > 0 ? 100.0 * row.total_ms / r.profiled_ms : 0.0}});
    j["backends"].push_back(std::move(b));
  }
  return j;
}


namespace {

const BenchResult* result_of(const BenchReport& rep, const std::string& backend) {
  for (const BenchResult& r : rep.results)
    if (r.backend == backend) return &r;
  return nullptr;
}

// Whether the backend met its check.expect.min_speedup on the model.
std::string met_text(const BenchResult& r) {
  if (!r.error.empty()) return "raised";
  if (!r.min_speedup) return "-";
  return r.below_min_speedup() ? "NO" : "yes";
}

}  // namespace

void print_suite(std::ostream& out, const BenchSuite& suite) {
  const std::vector<std::string> backends = suite.backends();
  out << "gbcheck bench | " << suite.folder << " (" << suite.reports.size() << " model"
      << (suite.reports.size() == 1 ? "" : "s") << ")";
  if (!suite.reports.empty()) {
    const BenchReport& first = suite.reports.front();
    out << " | " << first.device << " | case " << first.case_index << " | " << settings_text(first);
  }
  out << "\n";
  size_t name_width = 5;
  for (const BenchReport& rep : suite.reports) name_width = std::max(name_width, rep.model_name.size());
  const bool reused = !suite.reports.empty() && suite.reports.front().outputs_reused;
  out << pad("model", name_width + 2) << pad("eager ms", 11, true) << pad("reused", 10, true);
  for (const std::string& b : backends)
    out << pad(b + " ms", std::max<size_t>(11, b.size() + 5), true) << pad("speedup", 10, true) << pad("min", 7, true)
        << pad("met", 7, true) << pad("reused", 10, true) << pad("speedup", 10, true) << pad("GB/s", 8, true)
        << pad("% copy", 8, true);
  out << "\n";
  for (const BenchReport& rep : suite.reports) {
    const BenchResult& eager = rep.results.front();
    out << pad(rep.model_name, name_width + 2) << pad(fmt("%.3f", eager.median_ms), 11, true)
        << pad(rep.outputs_reused ? fmt("%.3f", eager.reused_median_ms) : "-", 10, true);
    for (const std::string& b : backends) {
      const size_t width = std::max<size_t>(11, b.size() + 5);
      const BenchResult* r = result_of(rep, b);
      const bool ran = r && r->error.empty(), ran_reused = ran && rep.outputs_reused;
      out << pad(ran ? fmt("%.3f", r->median_ms) : "-", width, true) << pad(ran ? format_speedup(r->speedup) : "-", 10, true)
          << pad(r && r->min_speedup ? fmt("%.2f", *r->min_speedup) : "-", 7, true) << pad(r ? met_text(*r) : "-", 7, true)
          << pad(ran_reused ? fmt("%.3f", r->reused_median_ms) : "-", 10, true)
          << pad(ran_reused ? format_speedup(r->reused_speedup) : "-", 10, true)
          << pad(ran ? gbs_text(rep.gbs(rep.traffic_ms(*r))) : "-", 8, true) << pad(ran ? copy_share(rep, *r) : "-", 8, true);
    }
    out << "\n";
  }
  for (const std::string& invalid : suite.invalid) out << "INVALID " << invalid << "\n";
  for (const std::string& b : backends) {
    const SuiteSummary s = suite.summary(b);
    out << b << ": geomean " << format_speedup(s.geomean) << " over " << s.models << " model"
        << (s.models == 1 ? "" : "s") << ", worst " << format_speedup(s.worst)
        << (s.worst_model.empty() ? "" : " (" + s.worst_model + ")") << ", " << s.below_min_speedup
        << " below their min_speedup";
    if (reused)
      out << "; outputs reused: geomean " << format_speedup(s.reused_geomean) << ", worst "
          << format_speedup(s.reused_worst) << (s.reused_worst_model.empty() ? "" : " (" + s.reused_worst_model + ")");
    out << "\n";
  }
  if (reused)
    out << "reused: times with outputs reused (memory already mapped; bench only); GB/s and % copy from them, "
           "against a copy of as many bytes into a touched buffer\n";
  for (const BenchReport& rep : suite.reports) print_profiles(out, rep);
  const std::vector<std::string> failures = suite.failures();
  for (const std::string& f : failures) out << "FAIL " << f << "\n";
  out << "result: " << (suite.exit_code() == kExitPass ? "PASS" : suite.invalid.empty() ? "FAIL" : "INVALID") << "\n";
}

nlohmann::json suite_json(const BenchSuite& suite) {
  nlohmann::json j;
  j["schema"] = "gbcheck.bench_suite/v1";
  j["folder"] = suite.folder;
  j["pass"] = suite.exit_code() == kExitPass;
  j["exit_code"] = suite.exit_code();
  j["failures"] = suite.failures();
  j["invalid"] = suite.invalid;
  j["summary"] = nlohmann::json::array();
  for (const std::string& b : suite.backends()) {
    const SuiteSummary s = suite.summary(b);
    j["summary"].push_back({{"backend", s.backend},
                            {"models", s.models},
                            {"geomean_speedup", s.geomean},
                            {"worst_speedup", s.worst},
                            {"worst_model", s.worst_model},
                            {"below_min_speedup", s.below_min_speedup},
                            {"reused_geomean_speedup", s.reused_geomean},
                            {"reused_worst_speedup", s.reused_worst},
                            {"reused_worst_model", s.reused_worst_model}});
  }
  j["models"] = nlohmann::json::array();
  for (const BenchReport& rep : suite.reports) j["models"].push_back(bench_json(rep));
  return j;
}

}  // namespace gbc
