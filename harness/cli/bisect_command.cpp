// `gbcheck bisect MODEL.yaml [--backend B] [--inject-fault K]`: the first diverging stage of gbc's
// ladder, the pass whose absence removes the divergence, and the first diverging IR node
// (harness/bisect/bisect.h), with --json. Exit codes: 1 when a stage diverges, 0 when none does.
// Test: tests/bisect/bisect_test.cpp.
#include <iostream>

#include "compiler/aten/torch_environment.h"
#include "harness/bisect/bisect.h"
#include "harness/bisect/bisect_report.h"
#include "harness/cli/cli.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/run_args.h"
#include "harness/report/json_report.h"

namespace gbc {

std::function<int()> add_bisect_command(CLI::App& sub) {
  struct Args {
    RunArgs run;
    std::string json_path;
    double timeout_s = 300.0;
  };
  auto args = std::make_shared<Args>();
  RunArgsScope scope;
  scope.one_backend = true;
  scope.given_inputs = true;
  scope.fullgraph = false;
  scope.reference = false;  // gbc's ladder is walked against eager
  args->run.add_to(sub, scope);
  sub.add_option("--json", args->json_path, "also write the result as JSON (schema gbcheck.bisect/v1)")
      ->check(writable_file());
  sub.add_option("--timeout", args->timeout_s, "seconds one sandboxed check of a stage may take")
      ->check(number_at_least(0.001))
      ->capture_default_str();
  return [args]() -> int {
    if (!args->run.apply_logging()) return kExitInvalid;
    if (args->run.backends.size() > 1) {
      std::cerr << "gbcheck: bisect walks towards one backend; give --backend once\n";
      return kExitInvalid;
    }
    Model model = args->run.load();
    RunOptions opt;
    if (auto stop = args->run.resolve(model, opt)) return *stop;
    // Every check runs in a forked child: the parent stays single-threaded (sandbox.h).
    use_one_aten_thread();
    BisectOptions bo;
    bo.run = opt;
    bo.backend = args->run.backends.empty() ? opt.backends.back() : args->run.backends.front();
    bo.timeout_s = args->timeout_s;
    bo.on_progress = [](const std::string& line) { std::cerr << "bisect: " << line << "\n"; };
    BisectResult result;
    try {
      result = run_bisect(model, bo);
    } catch (const std::runtime_error& e) {
      std::cerr << "gbcheck: " << e.what() << "\n";
      return kExitInvalid;
    }
    print_bisect_result(result, std::cout);
    if (!args->json_path.empty()) {
      try {
        write_json_file(args->json_path, bisect_result_to_json(result));
      } catch (const std::exception& e) {
        std::cerr << "gbcheck: " << e.what() << "\n";
        return kExitInvalid;
      }
    }
    return result.diverged() ? kExitDivergence : kExitPass;
  };
}

}  // namespace gbc
