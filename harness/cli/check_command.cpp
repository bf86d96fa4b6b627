// `gbcheck check MODEL.yaml`: the differential check, with the terminal report and --json.
#include <unistd.h>

#include <algorithm>

#include "compiler/support/trace.h"
#include <iostream>

#include "harness/bisect/check_intermediates.h"
#include "harness/cli/cli.h"
#include "harness/cli/crash_report.h"
#include "harness/cli/html_output.h"
#include "harness/cli/inject_fault.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/progress.h"
#include "harness/cli/run_args.h"
#include "harness/report/drift_plot.h"
#include "harness/report/json_report.h"
#include "harness/report/program_json.h"
#include "harness/report/terminal_report.h"
#include "harness/runner/check_runner.h"

namespace gbc {

namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// `gbcheck MODEL --backend B... --seed S [--inject-fault K]`: a case index completes it.
std::string replay_prefix(const RunArgs& run, const Model& model, const RunOptions& opt) {
  std::string cmd = "gbcheck " + run.model_path;
  for (const auto& b : opt.backends) cmd += " --backend " + b;
  if (opt.reference != "eager") cmd += " --reference " + opt.reference;
  cmd += " --seed " + std::to_string(model.check.seed);
  if (!opt.backend_options.inject_fault.empty()) cmd += " --inject-fault " + opt.backend_options.inject_fault;
  // The given cases' indices follow the generated ones: replaying one needs both.
  return cmd + given_inputs_flags(opt.given_input_paths, opt.cases);
}

nlohmann::json report_json(const CheckReport& report) {
  nlohmann::json json = check_report_to_json(report);
  if (!report.injected_fault.empty()) json["injected_fault"] = report.injected_fault;  // a testing aid's report must say so
  return json;
}

}  // namespace

std::function<int()> add_check_command(CLI::App& sub) {
  struct Args {
    RunArgs run;
    std::string json_path;
    std::string plots_dir;
    std::string html_path;
    bool quiet = false;
    bool intermediates = false;
  };
  auto args = std::make_shared<Args>();
  RunArgsScope scope;
  scope.given_inputs = scope.save_cases = true;
  args->run.add_to(sub, scope);
  sub.add_option("--json", args->json_path, "also write the full report as JSON (schema: docs/json-report.md)")
      ->check(writable_file());
  sub.add_flag("--quiet,-q", args->quiet, "print only the final result line");
  sub.add_flag("--intermediates", args->intermediates,
               "also compare every node's value with eager's where the backend shows them (decomp, gbc-interp, gbc), "
               "naming the first diverging node");
  sub.add_option("--plots", args->plots_dir,
                 "write SVG plots of the per-step error (check.iterations) into DIR, one per backend")
      ->check(writable_folder());
  sub.add_option("--html", args->html_path,
                 "also write the HTML report (docs/report.md): FILE and its pages beside it, self-contained")
      ->check(writable_file());
  return [args]() -> int {
    if (!args->run.apply_logging()) return kExitInvalid;
    HtmlOutput html(args->html_path);
    if (!html.begin()) return kExitInvalid;
    Model model = args->run.load();
    RunOptions opt;
    if (auto stop = args->run.resolve(model, opt)) return *stop;
    const std::string& fault = opt.backend_options.inject_fault;
    {
      const CheckReport before = start_report(model, opt);
      CrashReportSetup crash;
      crash.model_path = args->run.model_path;
      crash.backends = join_names(opt.backends);
      crash.replay = replay_prefix(args->run, model, opt);
      crash.header = report_header(before);
      crash.banner = fault.empty() ? "" : fault_banner(fault);
      crash.quiet = args->quiet;
      crash.json_path = args->json_path;
      if (!crash.json_path.empty()) crash.json = report_json(before);
      install_crash_report(crash);
    }
    const int first_case = opt.only_case.value_or(0);
    set_crash_case(first_case);
    Progress progress("checking " + model.name + ": case");
    opt.on_progress = [&](int done, int total) {
      progress.update(done, total);
      set_crash_case(first_case + done);
    };
    opt.on_backend_done = trace_program;
    CheckReport report = run_check(model, opt);
    progress.finish();
    std::vector<BackendIntermediates> intermediates;
    if (args->intermediates) intermediates = check_intermediates(model, opt);
    const bool nodes_pass =
        std::all_of(intermediates.begin(), intermediates.end(), [](const BackendIntermediates& r) { return r.pass(); });
    TerminalStyle style;
    style.color = isatty(STDOUT_FILENO) != 0;
    style.verbose = args->run.verbose;
    if (!fault.empty()) std::cout << fault_banner(fault) << "\n";
    if (args->quiet) {
      std::cout << "result: " << (report.pass() && nodes_pass ? "PASS" : "FAIL") << "\n";
    } else {
      if (args->intermediates) print_intermediates(intermediates, std::cout);
      print_terminal_report(report, std::cout, style);
      if (!nodes_pass && report.pass()) std::cout << "result: FAIL (a node diverges: see intermediates above)\n";
    }
    if (!fault.empty()) std::cout << fault_banner(fault) << "\n";
    if (!args->plots_dir.empty()) {
      try {
        for (const auto& path : write_drift_plots(report, args->plots_dir))
          if (!args->quiet) std::cout << "plot: " << path << "\n";
      } catch (const std::exception& e) {
        std::cerr << "gbcheck: " << e.what() << "\n";
        return kExitInvalid;
      }
    }
    if (!args->json_path.empty()) {
      try {
        nlohmann::json json = report_json(report);
        if (args->intermediates) {
          json["intermediates"] = intermediates_json(intermediates);
          if (!nodes_pass && report.pass()) json["pass"] = false, json["exit_code"] = kExitDivergence;
        }
        write_json_file(args->json_path, json);
      } catch (const std::exception& e) {
        std::cerr << "gbcheck: " << e.what() << "\n";
        return kExitInvalid;
      }
    }
    const int exit_code = report.exit_code() == kExitPass && !nodes_pass ? kExitDivergence : report.exit_code();
    if (trace::enabled()) trace::emit("check_report", {{"report", report_json(report)}});
    if (!html.write(exit_code, args->quiet)) return kExitInvalid;
    return exit_code;
  };
}

}  // namespace gbc
