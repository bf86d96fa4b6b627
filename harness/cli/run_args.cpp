#include "harness/cli/run_args.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <iostream>

#include "compiler/ir/op_schema.h"
#include "compiler/passes/pass_manager.h"
#include "compiler/support/log.h"
#include "compiler/backends/backend_registry.h"
#include "harness/adapters/backends_config.h"
#include "harness/cli/inject_fault.h"
#include "harness/model/model_loader.h"
#include "harness/runner/check_report.h"

namespace gbc {
namespace {

Diagnostics unknown_passes(const std::vector<std::string>& names) {
  Diagnostics d;
  const std::vector<std::string> known = known_pass_names();
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  for (const std::string& name : names) {
    if (is_known_pass(name)) continue;
    std::string close = closest_name(name, known);
    d.error({"command line", 0, 0}, "--disable-pass: unknown pass '" + name + "'",
            (close.empty() ? "" : "did you mean '" + close + "'? ") + "passes: " + list);
  }
  return d;
}

}  // namespace

void RunArgs::add_to(CLI::App& app, bool model_required) {
  auto* m = app.add_option("model", model_path, "the model.yaml to check (docs/model-format.md)");
  if (model_required) m->required();
  app.add_option("--backend,-b", backends,
                 "compiled path to compare with eager; repeatable; overrides check.backends "
                 "(eager, nnc, trace, decomp, gbc-interp, gbc, ...: see docs/backends.md)");
  app.add_option("--cases,-n", cases, "number of input cases (overrides check.cases)")->check(CLI::PositiveNumber);
  app.add_option("--seed", seed, "seed of all random inputs (overrides check.seed)")->check(CLI::NonNegativeNumber);
  app.add_option("--case", only_case, "run only case K (replays a failure with the same --seed)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--shrink", shrink_path,
                 "with --case: replay that case's shrunk form, the PATH a failure report prints (e.g. 0.2.1)")
      ->check([](const std::string& s) {
        return ShrinkPath::parse(s) ? std::string() : "--shrink takes dot-separated shrink indices, e.g. 0.2.1";
      });
  app.add_option("--device", device, "cpu or cuda (overrides check.device)")->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_flag("--fullgraph", fullgraph,
               "fail on the first graph break, naming it (like torch.compile(fullgraph=True))");
  app.add_option("--disable-pass", disabled_passes,
                 "switch off a gbc compiler pass by name; repeatable (graph passes as in configs/pipeline.yaml, fuse, "
                 "fold_params)");
  app.add_option("--cache-dir", cache_dir, "where compiled kernels are cached (default: $GBCHECK_CACHE_DIR or ~/.cache/gbcheck)");
  app.add_flag("--no-cache", no_cache, "compile every kernel afresh, ignoring the kernel cache");
  app.add_option("--log", log_channels,
                 "print compiler events as they happen, like TORCH_LOGS: a comma-separated list of graph_breaks, "
                 "recompiles, fallbacks, passes, kernels, guards, or all (also $GBCHECK_LOGS)");
  app.add_flag("--verbose,-v", verbose, "more detail: every compile event, and info-level logging");
  app.add_option("--backends-config", backends_config,
                 "a backends file (docs/adapters.md) whose adapters join those of configs/backends.yaml and "
                 "$GBCHECK_BACKENDS_CONFIG");
  app.add_option("--inject-fault", inject_fault,
                 "TESTING AID: build gbc's kernels with a known bug (kinds: `gbcheck --inject-fault list`)");
}

bool RunArgs::apply_logging() const {
  if (verbose) log::set_level(log::Level::info);
  if (log_channels.empty()) return true;
  auto unknown = log::enable_channels(log_channels);
  if (unknown.empty()) return true;
  std::string known;
  for (const auto& n : log::channel_names()) known += (known.empty() ? "" : ", ") + n;
  std::cerr << "gbcheck: unknown log channel '" << unknown[0] << "' (known: " << known << ", all)\n";
  return false;
}

Model RunArgs::load() const {
  Model model = load_model_file(model_path);
  if (seed) model.check.seed = static_cast<uint64_t>(*seed);
  return model;
}

std::optional<int> RunArgs::resolve(const Model& model, RunOptions& out) const {
  out = run_options_from_model(model);
  bool from_cli = !backends.empty();
  if (from_cli) out.backends = backends;
  if (cases) out.cases = *cases;
  out.only_case = only_case;
  if (!shrink_path.empty()) {
    if (!only_case) {
      std::cerr << "gbcheck: --shrink needs --case: it names a shrink of that case (copy both from the report)\n";
      return kExitInvalid;
    }
    out.shrink_path = *ShrinkPath::parse(shrink_path);
  }
  if (!device.empty()) out.backend_options.device = device;
  out.fullgraph = fullgraph;
  // The pipeline file is read here, so that an error in it stops the command as such (exit 2 or
  // 4) instead of failing a backend's compile.
  graph_pipeline();
  if (Diagnostics bad = unknown_passes(disabled_passes); bad.has_errors()) {
    std::cerr << bad.str();
    return kExitInvalid;
  }
  out.backend_options.disabled_passes = disabled_passes;
  out.backend_options.cache_dir = cache_dir;
  out.backend_options.use_cache = !no_cache;

  register_external_backends(backends_config);
  Diagnostics d = validate_backends(model, out.backends, from_cli);
  Diagnostics oracles = validate_check_options(model);
  if (d.has_errors() || oracles.has_errors()) {
    std::cerr << d.str() << oracles.str();
    return kExitInvalid;
  }
  if (!inject_fault.empty()) {
    if (auto stop = check_inject_fault(inject_fault, out.backends)) return stop;
    out.backend_options.inject_fault = inject_fault;
  }
  for (const std::string& b : out.backends) {
    if (!is_external_backend(b)) continue;
    std::string why = backend_unavailable_reason(b);
    if (why.empty()) continue;
    std::cerr << (from_cli ? std::string("command line") : model.check.loc_of("backends").str()) << ": error: backend " << b
              << " cannot run here: " << why << "\n  `gbcheck backends` lists every backend and whether it can run\n";
    return kExitEnvironment;
  }
  for (const std::string& b : out.backends) {
    if (b != "gbc-cudagraphs" || out.backend_options.device == "cuda") continue;
    std::cerr << (from_cli ? std::string("command line") : model.check.loc_of("backends").str())
              << ": error: backend gbc-cudagraphs replays CUDA graphs and needs device cuda, but this run is on device "
              << out.backend_options.device << "\n  use --device cuda on a machine with an NVIDIA GPU, or the gbc backend\n";
    return kExitEnvironment;
  }
  if (out.backend_options.device == "cuda" && !at::hasCUDA()) {
    std::cerr << (device.empty() ? model.check.loc_of("device").str() : std::string("command line"))
              << ": error: device cuda requested, but this LibTorch (" << TORCH_VERSION
              << ") has no usable CUDA device\n"
                 "  run on a machine with an NVIDIA GPU and a CUDA build of LibTorch, or use --device cpu\n";
    return kExitEnvironment;
  }
  return std::nullopt;
}

}  // namespace gbc
