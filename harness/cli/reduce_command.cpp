// `gbcheck reduce MODEL.yaml [--backend B] [--out DIR] [--reduce-config FILE]`: the smallest
// model that still fails the same way (harness/reduce/reducer.h), with the pass schedule of
// configs/reduce.yaml and FILE's keys on top. Progress (phase, nodes left, candidates, checks, elapsed)
// goes to stderr; the summary to stdout; DIR gets model.yaml, inputs.json and summary.json.
// Exit codes: 0 a reduced model was written, 1 nothing to reduce (the model passes) or the check is
// nondeterministic, 2 invalid model, config or usage, 4 configs/ missing. Tests:
// tests/reduce/reducer_test.cpp (the library), tests/cli/config_flags_test.cpp (--reduce-config).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iomanip>
#include <iostream>

#include "compiler/aten/torch_environment.h"
#include "compiler/support/trace.h"
#include "harness/cli/cli.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/run_args.h"
#include "harness/reduce/reducer.h"
#include "harness/report/json_report.h"

namespace gbc {
namespace {

// A self-updating line on a terminal; otherwise a plain line after each accepted candidate at
// most every few seconds, so logs show life without flooding.
class ReduceProgressLine {
 public:
  ReduceProgressLine() : tty_(isatty(STDERR_FILENO) != 0) {}
  void operator()(const ReduceProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    const double since = std::chrono::duration<double>(now - last_).count();
    if (tty_ ? since < 0.1 && !p.accepted : !p.accepted || since < 5.0) return;
    last_ = now;
    char line[160];
    std::snprintf(line, sizeof line, "reduce: %-10s %4d nodes left | %5d candidates | %5d checks | %6.1f s",
                  p.phase.c_str(), p.nodes_left, p.candidates, p.checks, p.elapsed_s);
    std::cerr << (tty_ ? "\r\033[K" : "") << line << (tty_ ? "" : "\n") << std::flush;
    shown_ = true;
  }
  void finish() {
    if (tty_ && shown_) std::cerr << "\r\033[K" << std::flush;
  }

 private:
  bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

std::string default_out_dir(const std::string& model_path) {
  std::string base = model_path;
  for (const char* ext : {".yaml", ".yml"})
    if (base.size() > std::string(ext).size() && base.compare(base.size() - std::string(ext).size(), std::string::npos, ext) == 0)
      base.resize(base.size() - std::string(ext).size());
  return base + ".reduced";
}

}  // namespace

std::function<int()> add_reduce_command(CLI::App& sub) {
  struct Args {
    RunArgs run;
    std::string out_dir;
    std::string json_path;
    std::string reduce_config;
    double timeout_s = 30.0;
    double memory_gib = 4.0;
    int max_checks = 0;
  };
  auto args = std::make_shared<Args>();
  RunArgsScope scope;  // one failure, from a case as drawn
  scope.one_backend = true;
  scope.given_inputs = true;
  scope.shrink = false;
  args->run.add_to(sub, scope);
  sub.add_option("--out,-o", args->out_dir, "where to write model.yaml, inputs.json and summary.json (default: MODEL.reduced/)")
      ->check(writable_folder());
  sub.add_option("--timeout", args->timeout_s, "seconds each candidate's check may run before it counts as a hang (default 30)")
      ->check(number_at_least(0.001));
  sub.add_option("--memory", args->memory_gib, "GiB each candidate's check may allocate (default 4; 0: no limit)")->check(number_at_least(0));
  sub.add_option("--max-checks", args->max_checks, "stop after this many checks and keep the smallest model so far (default: no limit)")
      ->check(whole_number(1, std::numeric_limits<int>::max()));
  sub.add_option("--json", args->json_path, "also write the summary as JSON (schema gbcheck.reduce/v1, docs/cli.md)")
      ->check(writable_file());
  sub.add_option("--reduce-config", args->reduce_config,
                 "a reduce config whose keys override configs/reduce.yaml's (the pass schedule; docs/configs.md)");
  return [args]() -> int {
    if (!args->run.apply_logging()) return kExitInvalid;
    if (args->run.backends.size() > 1) {
      std::cerr << "gbcheck: reduce keeps one failure: give at most one --backend\n";
      return kExitInvalid;
    }
    ReduceOptions opt;
    opt.config = load_reduce_config(args->reduce_config);
    // Candidates run in forked children: ATen must not have started worker threads (sandbox.h).
    use_one_aten_thread();
    Model model = args->run.load();
    RunOptions run;
    if (auto stop = args->run.resolve(model, run)) return *stop;
    model.check.backends = run.backends;
    if (run.cases > 0) model.check.cases = run.cases;
    opt.given_cases = run.given_cases;
    opt.generated_cases = run.cases;

    opt.backend = args->run.backends.empty() ? "" : args->run.backends[0];
    opt.reference = run.reference;
    opt.only_case = run.only_case;
    opt.fullgraph = run.fullgraph;
    opt.backend_options = run.backend_options;
    opt.limits.timeout_s = args->timeout_s;
    opt.limits.memory_bytes = static_cast<size_t>(args->memory_gib * double(size_t{1} << 30));
    opt.max_checks = args->max_checks;
    ReduceProgressLine progress;
    opt.on_progress = [&](const ReduceProgress& p) {
      progress(p);
      trace::emit("reduce_step", {{"phase", p.phase}, {"nodes_left", p.nodes_left}, {"candidates", p.candidates},
                                  {"checks", p.checks}, {"elapsed_s", p.elapsed_s}, {"accepted", p.accepted}});
    };
    ReduceResult r = reduce_model(model, opt);
    progress.finish();

    const std::string out_dir = args->out_dir.empty() ? default_out_dir(args->run.model_path) : args->out_dir;
    const bool written = r.status != ReduceResult::Status::NotFailing;
    if (r.status == ReduceResult::Status::NotFailing) {
      std::cout << "reduce: nothing to reduce: " << r.note << "\n";
    } else {
      try {
        write_reduction(r, args->run.model_path, out_dir);
      } catch (const std::exception& e) {
        std::cerr << "gbcheck: " << e.what() << "\n";
        return kExitInvalid;
      }
      std::cout << "reduce: " << model.name << " (" << args->run.model_path << ") | " << r.backend
                << (r.reference == "eager" ? "" : " vs " + r.reference) << " | case "
                << r.case_index << " | seed " << r.seed << "\n"
                << "  failure:  " << r.original.str() << "\n"
                << "  reduced:  " << r.signature.str() << " (signature " << r.signature.hash() << ")\n"
                << "  nodes:    " << r.nodes_before << " -> " << r.nodes_after << "\n"
                << "  checks:   " << r.checks << " (" << r.candidates << " candidates, " << r.accepted << " accepted) in "
                << std::fixed << std::setprecision(1) << r.elapsed_s << " s" << (r.budget_exhausted ? " (stopped at --max-checks)" : "") << "\n"
                << "  replay:   "
                << (r.reproduces_with_drawn_inputs
                        ? r.replay_command(out_dir + "/model.yaml")
                        : std::string("the drawn inputs do not reproduce it; the failing values are in inputs.json"))
                << "\n";
      if (const std::string views = kept_layouts_text(r); !views.empty()) std::cout << "  views:    " << views << " (kept: the failure needs them)\n";
      if (r.status == ReduceResult::Status::Nondeterministic) std::cout << "  NONDETERMINISTIC: " << r.note << "\n";
      std::cout << "wrote " << out_dir << "/model.yaml, inputs.json, summary.json\n";
    }
    trace::emit("reduce_result", {{"summary", reduction_summary_json(r, args->run.model_path, written ? out_dir : "")}});
    if (!args->json_path.empty()) {
      try {
        write_json_file(args->json_path, reduction_summary_json(r, args->run.model_path, written ? out_dir : ""));
      } catch (const std::exception& e) {
        std::cerr << "gbcheck: " << e.what() << "\n";
        return kExitInvalid;
      }
    }
    return r.status == ReduceResult::Status::Reduced ? kExitPass : kExitDivergence;
  };
}

}  // namespace gbc
