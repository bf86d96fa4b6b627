// `gbcheck bench MODEL.yaml`: eager LibTorch against compiled paths on one case (warm-up, then the
// median of --repeat runs; compile time apart), with --profile's per-kernel table for gbc's
// backends and check.expect.min_speedup as a pass/fail threshold (exit 1 with the numbers).
// `gbcheck bench DIR` benches every model of a folder into one table (harness/bench/bench_suite.h).
// --json writes schema gbcheck.bench/v1 or gbcheck.bench_suite/v1 (docs/cli.md). Docs:
// docs/performance.md.
// Test: tests/cli/bench_command_test.cpp.
#include <filesystem>
#include <iostream>

#include "compiler/support/trace.h"
#include "harness/bench/bench_runner.h"
#include "harness/bench/bench_suite.h"
#include "harness/cli/bench_output.h"
#include "harness/cli/cli.h"
#include "harness/cli/inject_fault.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/run_args.h"
#include "harness/model/model_folder.h"
#include "harness/report/json_report.h"

namespace gbc {
namespace {

struct BenchArgs {
  RunArgs run;
  int warmup = 3;
  int repeat = 10;
  bool profile = false;
  std::string clock = "wall";
  std::string json_path;
};

BenchOptions bench_options(const RunOptions& opt, const BenchArgs& args) {
  BenchOptions bo;
  bo.backends = opt.backends;
  bo.warmup = args.warmup;
  bo.repeat = args.repeat;
  bo.case_index = opt.only_case.value_or(0);
  bo.profile = args.profile;
  bo.cpu_clock = args.clock == "cpu";
  bo.fullgraph = opt.fullgraph;
  bo.backend_options = opt.backend_options;
  return bo;
}

// --clock cpu reads the host's CPU time, which says nothing of asynchronous GPU work.
bool clock_fits_device(const BenchArgs& args, const RunOptions& opt) {
  if (args.clock != "cpu" || opt.backend_options.device != "cuda") return true;
  std::cerr << "gbcheck: --clock cpu times the host's CPU, not the GPU's work: bench --device cuda with --clock wall\n";
  return false;
}

bool write_json(const std::string& path, const nlohmann::json& j) {
  if (path.empty()) return true;
  try {
    write_json_file(path, j);
    return true;
  } catch (const std::exception& e) {
    std::cerr << "gbcheck: " << e.what() << "\n";
    return false;
  }
}

// `gbcheck bench DIR`: every model is loaded and its options resolved before any runs, so that a
// mistake in the last model stops the suite at once rather than after minutes of timing.
int bench_folder(const BenchArgs& args) {
  BenchSuite suite;
  suite.folder = args.run.model_path;
  std::vector<std::pair<Model, BenchOptions>> planned;
  for (const std::string& path : models_in_folder(args.run.model_path)) {
    RunArgs run = args.run;
    run.model_path = path;
    Model model = run.load();
    RunOptions opt;
    if (auto stop = run.resolve(model, opt)) return *stop;
    if (!clock_fits_device(args, opt)) return kExitInvalid;
    planned.emplace_back(std::move(model), bench_options(opt, args));
  }
  if (planned.empty()) {
    std::cerr << "gbcheck: " << args.run.model_path << " holds no model (*.yaml) to bench\n";
    return kExitInvalid;
  }
  std::string fault;
  for (size_t i = 0; i < planned.size(); ++i) {
    const auto& [model, options] = planned[i];
    std::cerr << "gbcheck bench: [" << i + 1 << "/" << planned.size() << "] " << model.name << "\n";
    try {
      suite.reports.push_back(run_bench(model, options));
      fault = suite.reports.back().injected_fault;
      trace::emit("bench_report", {{"report", bench_json(suite.reports.back())}});
    } catch (const ModelError& e) {
      suite.invalid.push_back(model.name + ": " + e.diagnostics().str());
    }
  }
  const std::string banner = fault.empty() ? "" : fault_banner(fault) + "\n";
  std::cout << banner;
  print_suite(std::cout, suite);
  std::cout << banner;
  if (!write_json(args.json_path, suite_json(suite))) return kExitInvalid;
  return suite.exit_code();
}

}  // namespace

std::function<int()> add_bench_command(CLI::App& sub) {
  auto args = std::make_shared<BenchArgs>();
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
  sub.add_option("--clock", args->clock,
                 "wall, or cpu: the process's CPU time (user + sys), steadier than wall time on a loaded machine; "
                 "for one-thread comparisons (GBCHECK_THREADS=1) on the CPU")
      ->check(CLI::IsMember({"wall", "cpu"}))
      ->capture_default_str();
  sub.add_flag("--profile", args->profile, "per-kernel times of gbc's backends (name, calls, total, avg, % of run)");
  sub.add_option("--json", args->json_path, "also write the results as JSON (schema: docs/json-report.md)")
      ->check(writable_file());
  return [args]() -> int {
    if (!args->run.apply_logging()) return kExitInvalid;
    if (std::filesystem::is_directory(args->run.model_path)) return bench_folder(*args);
    Model model = args->run.load();
    RunOptions opt;
    if (auto stop = args->run.resolve(model, opt)) return *stop;
    if (!clock_fits_device(*args, opt)) return kExitInvalid;
    BenchReport rep = run_bench(model, bench_options(opt, *args));
    const std::string banner = rep.injected_fault.empty() ? "" : fault_banner(rep.injected_fault) + "\n";
    std::cout << banner;  // times of a deliberately broken gbc must say so, as check's report does
    print_bench(std::cout, rep);
    std::cout << banner;
    if (!write_json(args->json_path, bench_json(rep))) return kExitInvalid;
    trace::emit("bench_report", {{"report", bench_json(rep)}});
    return rep.exit_code();
  };
}

}  // namespace gbc
