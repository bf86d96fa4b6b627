// `gbcheck repro MODEL.yaml --out DIR [--backend B] [--seed S --case K]`: writes a folder that
// reproduces a failing case without gbcheck (harness/repro/repro.h). Exit codes: 1 when the folder
// reproduces a divergence, 0 when no case fails (nothing is written then).
// Test: tests/repro/repro_test.cpp.
#include <iostream>

#include "compiler/aten/torch_environment.h"
#include "harness/cli/cli.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/run_args.h"
#include "harness/repro/repro.h"
#include "harness/repro/repro_readme.h"

namespace gbc {

std::function<int()> add_repro_command(CLI::App& sub) {
  struct Args {
    RunArgs run;
    std::string out_dir;
    double timeout_s = 300.0;
  };
  auto args = std::make_shared<Args>();
  RunArgsScope scope;
  scope.one_backend = true;
  scope.given_inputs = true;
  scope.fullgraph = false;
  scope.reference = false;  // repro.py and repro.cpp compare with eager
  args->run.add_to(sub, scope);
  sub.add_option("--out,-o", args->out_dir, "the folder to write (created; files in it are replaced)")
      ->required()
      ->check(writable_folder());
  sub.add_option("--timeout", args->timeout_s, "seconds one sandboxed run of the backend may take")
      ->check(number_at_least(0.001))
      ->capture_default_str();
  return [args]() -> int {
    if (!args->run.apply_logging()) return kExitInvalid;
    if (args->run.backends.size() > 1) {
      std::cerr << "gbcheck: repro packages one failing backend; give --backend once\n";
      return kExitInvalid;
    }
    Model model = args->run.load();
    RunOptions opt;
    if (auto stop = args->run.resolve(model, opt)) return *stop;
    use_one_aten_thread();  // runs fork (harness/sandbox/sandbox.h)
    ReproOptions ro;
    ro.run = opt;
    ro.backend = opt.backends.front();
    ro.out_dir = args->out_dir;
    ro.case_index = args->run.only_case;
    ro.timeout_s = args->timeout_s;
    ReproResult r;
    try {
      r = write_repro(model, ro);
    } catch (const std::runtime_error& e) {
      std::cerr << "gbcheck: " << e.what() << "\n";
      return kExitInvalid;
    }
    if (r.files.empty()) {
      std::cout << "nothing to reproduce: " << ro.backend << " agrees with eager on every case of " << model.path << "\n";
      return kExitPass;
    }
    std::cout << "repro of " << model.path << " on " << ro.backend << " (case " << r.case_index << ", seed " << r.seed
              << ") written to " << ro.out_dir << ":\n";
    for (const auto& f : r.files) std::cout << "  " << f << "\n";
    if (!r.observed_error.empty()) std::cout << "observed: " << r.observed_error << "\n";
    for (const auto& d : r.diffs)
      if (d.mismatches) std::cout << "observed: " << d.output << ": " << d.mismatches << " of " << d.elements << " elements differ\n";
    if (!r.reproduced) std::cout << "note: case " << r.case_index << " does not diverge; the folder shows it passing\n";
    std::cout << "replay: cd " << ro.out_dir << " && cmake -S . -B build && cmake --build build && ./build/repro\n";
    return r.reproduced ? kExitDivergence : kExitPass;
  };
}

}  // namespace gbc
