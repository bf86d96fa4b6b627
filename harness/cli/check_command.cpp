// `gbcheck check MODEL.yaml`: the differential check, with the terminal report and --json.
// `gbcheck check A.yaml B.yaml DIR`: several models in one process (harness/cli/check_models.h).
#include <unistd.h>

#include <algorithm>

#include "compiler/support/trace.h"
#include <iostream>

#include "harness/bisect/check_intermediates.h"
#include "harness/cli/check_models.h"
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

struct CheckArgs {
  RunArgs run;
  std::string json_path;
  std::string plots_dir;
  std::string html_path;
  bool quiet = false;
  bool intermediates = false;
};

// The options that name one output file or one case, which several models cannot share: the
// first given, as its flag, or "".
std::string one_model_option(const CheckArgs& args) {
  const RunArgs& run = args.run;
  const std::vector<std::pair<const char*, bool>> given = {
      {"--json", !args.json_path.empty()},         {"--html", !args.html_path.empty()},
      {"--plots", !args.plots_dir.empty()},        {"--save-inputs", !run.save_inputs.empty()},
      {"--save-outputs", !run.save_outputs.empty()}, {"--trace", !run.trace_dir.empty()},
      {"--case", run.only_case.has_value()},       {"--shrink", !run.shrink_path.empty()},
      {"--inputs", !run.given_inputs.empty()},     {"--input", !run.import_inputs.empty()},
      {"--dim", !run.import_dims.empty()}};
  for (const auto& [flag, is_given] : given)
    if (is_given) return flag;
  return "";
}

// One model's check, its report printed: with -q only `quiet_label: PASS|FAIL` (`result: PASS`
// for a single model; among several check_models prints that line, quiet_label is ""). Throws
// what loading and checking throw.
ModelOutcome check_model(const CheckArgs& args, const RunArgs& run, const std::string& quiet_label) {
  HtmlOutput html(args.html_path);
  if (!html.begin()) return {kExitInvalid, ""};
  Model model = run.load();
  RunOptions opt;
  if (auto stop = run.resolve(model, opt)) return {*stop, ""};
  const std::string& fault = opt.backend_options.inject_fault;
  {
    const CheckReport before = start_report(model, opt);
    CrashReportSetup crash;
    crash.model_path = run.model_path;
    crash.backends = join_names(opt.backends);
    crash.replay = replay_prefix(run, model, opt);
    crash.header = report_header(before);
    crash.banner = fault.empty() ? "" : fault_banner(fault);
    crash.quiet = args.quiet;
    crash.json_path = args.json_path;
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
  if (args.intermediates) intermediates = check_intermediates(model, opt);
  const bool nodes_pass =
      std::all_of(intermediates.begin(), intermediates.end(), [](const BackendIntermediates& r) { return r.pass(); });
  TerminalStyle style;
  style.color = isatty(STDOUT_FILENO) != 0;
  style.verbose = run.verbose;
  if (!fault.empty()) std::cout << fault_banner(fault) << "\n";
  if (args.quiet) {
    if (!quiet_label.empty()) std::cout << quiet_label << ": " << (report.pass() && nodes_pass ? "PASS" : "FAIL") << "\n";
  } else {
    if (args.intermediates) print_intermediates(intermediates, std::cout);
    print_terminal_report(report, std::cout, style);
    if (!nodes_pass && report.pass()) std::cout << "result: FAIL (a node diverges: see intermediates above)\n";
  }
  if (!fault.empty()) std::cout << fault_banner(fault) << "\n";
  if (!args.plots_dir.empty()) {
    try {
      for (const auto& path : write_drift_plots(report, args.plots_dir))
        if (!args.quiet) std::cout << "plot: " << path << "\n";
    } catch (const std::exception& e) {
      std::cerr << "gbcheck: " << e.what() << "\n";
      return {kExitInvalid, ""};
    }
  }
  if (!args.json_path.empty()) {
    try {
      nlohmann::json json = report_json(report);
      if (args.intermediates) {
        json["intermediates"] = intermediates_json(intermediates);
        if (!nodes_pass && report.pass()) json["pass"] = false, json["exit_code"] = kExitDivergence;
      }
      write_json_file(args.json_path, json);
    } catch (const std::exception& e) {
      std::cerr << "gbcheck: " << e.what() << "\n";
      return {kExitInvalid, ""};
    }
  }
  const int exit_code = report.exit_code() == kExitPass && !nodes_pass ? kExitDivergence : report.exit_code();
  if (trace::enabled()) trace::emit("check_report", {{"report", report_json(report)}});
  if (!html.write(exit_code, args.quiet)) return {kExitInvalid, ""};
  return {exit_code, report.pass() && !nodes_pass ? "a node diverges (--intermediates)" : report.failure_summary()};
}

}  // namespace

std::function<int()> add_check_command(CLI::App& sub) {
  auto args = std::make_shared<CheckArgs>();
  RunArgsScope scope;
  scope.given_inputs = scope.save_cases = scope.several_models = true;
  args->run.add_to(sub, scope);
  sub.add_option("--json", args->json_path, "also write the full report as JSON (schema: docs/json-report.md)")
      ->check(writable_file());
  sub.add_flag("--quiet,-q", args->quiet,
               "print only the final result line (with several models: a `MODEL: PASS|FAIL` line each, and the summary)");
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
    if (!names_several_models(args->run.model_paths)) {
      if (!args->run.apply_logging()) return kExitInvalid;
      args->run.model_path = args->run.model_paths.at(0);
      return check_model(*args, args->run, "result").exit_code;
    }
    if (std::string flag = one_model_option(*args); !flag.empty()) {
      std::cerr << "gbcheck: " << flag << " names one model's output or case, and this run checks several models: "
                << "check that model alone\nrun `gbcheck check --help` for usage\n";
      return kExitInvalid;
    }
    const auto models = model_files(args->run.model_paths);
    if (!models) return kExitInvalid;
    if (!args->run.apply_logging()) return kExitInvalid;
    return check_models(*models, args->quiet, [&args](const std::string& model) {
      RunArgs run = args->run;
      run.model_path = model;
      return check_model(*args, run, "");
    });
  };
}

}  // namespace gbc
