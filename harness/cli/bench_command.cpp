// `gbcheck bench MODEL.yaml`: eager LibTorch against compiled paths on one case (warm-up, then the
// median of --repeat runs; compile time apart), with --profile's per-kernel table for gbc's
// backends and check.expect.min_speedup as a pass/fail threshold (exit 1 with the numbers).
// --json writes schema gbcheck.bench/v1 (docs/json-report.md). Docs: docs/performance.md.
// Test: tests/cli/bench_command_test.cpp.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "compiler/support/trace.h"
#include "harness/bench/bench_runner.h"
#include "harness/cli/cli.h"
#include "harness/cli/inject_fault.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/run_args.h"
#include "harness/report/json_report.h"

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

void print_bench(std::ostream& out, const BenchReport& rep) {
  std::string dims;
  for (const auto& [name, value] : rep.dims) dims += (dims.empty() ? "" : ", ") + name + "=" + std::to_string(value);
  out << "gbcheck bench | " << rep.model_name << " (" << rep.model_path << ") | " << rep.device << " | case "
      << rep.case_index << (dims.empty() ? "" : " (" + dims + ")") << " | warm-up " << rep.warmup << ", median of "
      << rep.repeat << " | LibTorch " << rep.torch_version << " (" << rep.eager_threads << " thread"
      << (rep.eager_threads == 1 ? "" : "s") << "), gbc kernels " << rep.kernel_threads << " thread"
      << (rep.kernel_threads == 1 ? "" : "s") << "\n";
  out << pad("backend", 12) << pad("median ms", 12, true) << pad("min ms", 12, true) << pad("speedup", 10, true)
      << pad("compile ms", 12, true) << pad("first call ms", 15, true) << pad("graphs", 8, true) << pad("kernels", 9, true)
      << pad("breaks", 8, true) << pad("fallbacks", 11, true) << pad("GB/s", 9, true) << pad("% copy", 8, true) << "\n";
  for (const BenchResult& r : rep.results) {
    out << pad(r.backend, 12);
    if (!r.error.empty()) {
      out << "  raised: " << r.error << "\n";
      continue;
    }
    bool eager = r.backend == "eager";
    out << pad(fmt("%.3f", r.median_ms), 12, true) << pad(fmt("%.3f", r.min_ms), 12, true)
        << pad(format_speedup(r.speedup), 10, true) << pad(eager ? "-" : fmt("%.1f", r.stats.compile_ms), 12, true)
        << pad(fmt("%.1f", r.first_call_ms), 15, true) << pad(eager ? "-" : std::to_string(r.stats.graphs), 8, true)
        << pad(eager ? "-" : std::to_string(r.stats.fusion_groups), 9, true)
        << pad(eager ? "-" : std::to_string(r.stats.graph_breaks), 8, true)
        << pad(eager ? "-" : std::to_string(r.stats.fallbacks), 11, true) << pad(gbs_text(rep.gbs(r.median_ms)), 9, true)
        << pad(rep.copy_ms > 0 ? fmt("%.0f%%", 100.0 * rep.gbs(r.median_ms) / rep.copy_gbs()) : "-", 8, true) << "\n";
  }
  out << "GB/s: the " << fmt("%.1f", static_cast<double>(rep.bytes_moved) / (1 << 20))
      << " MiB every implementation must move (inputs read once, outputs written once) over the median; % copy: "
         "of a device copy of as many bytes ("
      << fmt("%.3f", rep.copy_ms) << " ms, " << gbs_text(rep.copy_gbs()) << " GB/s)\n";
  for (const BenchResult& r : rep.results) {
    if (r.profile.empty()) continue;
    out << "\n" << r.backend << " profile (" << rep.repeat << " runs, " << fmt("%.3f", r.profiled_ms) << " ms):\n";
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
  j["eager_threads"] = rep.eager_threads;
  j["kernel_threads"] = rep.kernel_threads;
  j["bytes_moved"] = rep.bytes_moved;
  j["copy_ms"] = rep.copy_ms;
  j["copy_gbs"] = rep.copy_gbs();
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

}  // namespace

std::function<int()> add_bench_command(CLI::App& sub) {
  struct Args {
    RunArgs run;
    int warmup = 3;
    int repeat = 10;
    bool profile = false;
    std::string json_path;
  };
  auto args = std::make_shared<Args>();
  RunArgsScope scope;  // one case, as drawn
  scope.cases = scope.shrink = scope.tolerances = false;
  scope.reference = false;  // timed against eager, not compared
  args->run.add_to(sub, scope);
  sub.add_option("--warmup", args->warmup, "untimed calls first (compiles happen here)")
      ->check(whole_number(0, 1000000))
      ->capture_default_str();
  sub.add_option("--repeat", args->repeat, "timed calls; the median is reported")
      ->check(whole_number(1, 1000000))
      ->capture_default_str();
  sub.add_flag("--profile", args->profile, "per-kernel times of gbc's backends (name, calls, total, avg, % of run)");
  sub.add_option("--json", args->json_path, "also write the results as JSON (schema: docs/json-report.md)")
      ->check(writable_file());
  return [args]() -> int {
    if (!args->run.apply_logging()) return kExitInvalid;
    Model model = args->run.load();
    RunOptions opt;
    if (auto stop = args->run.resolve(model, opt)) return *stop;
    BenchOptions bo;
    bo.backends = opt.backends;
    bo.warmup = args->warmup;
    bo.repeat = args->repeat;
    bo.case_index = opt.only_case.value_or(0);
    bo.profile = args->profile;
    bo.fullgraph = opt.fullgraph;
    bo.backend_options = opt.backend_options;
    BenchReport rep = run_bench(model, bo);
    const std::string banner = rep.injected_fault.empty() ? "" : fault_banner(rep.injected_fault) + "\n";
    std::cout << banner;  // times of a deliberately broken gbc must say so, as check's report does
    print_bench(std::cout, rep);
    std::cout << banner;
    if (!args->json_path.empty()) {
      try {
        write_json_file(args->json_path, bench_json(rep));
      } catch (const std::exception& e) {
        std::cerr << "gbcheck: " << e.what() << "\n";
        return kExitInvalid;
      }
    }
    trace::emit("bench_report", {{"report", bench_json(rep)}});
    return rep.exit_code();
  };
}

}  // namespace gbc
