#include "harness/cli/run_args.h"

#include <cstdlib>
#include <iostream>
#include <limits>
#include <utility>

#include "compiler/aten/torch_environment.h"
#include "compiler/ir/op_schema.h"
#include "compiler/passes/pass_manager.h"
#include "compiler/support/log.h"
#include "compiler/support/trace.h"
#include "compiler/backends/backend_registry.h"
#include "harness/adapters/backends_config.h"
#include "harness/cli/cli.h"
#include "harness/cli/inject_fault.h"
#include "harness/cli/option_checks.h"
#include "harness/import/torchscript_import.h"
#include "harness/inputs/user_inputs.h"
#include "harness/model/model_loader.h"
#include "harness/report/graph_json.h"
#include "harness/runner/check_report.h"

namespace gbc {
namespace {

constexpr int64_t kMaxCount = std::numeric_limits<int>::max();

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

void RunArgs::add_to(CLI::App& app, const RunArgsScope& scope) {
  auto* m = scope.several_models
                ? app.add_option("model", model_paths,
                                 "the model.yaml files to check (docs/model-format.md), one after the other; a folder "
                                 "stands for the *.yaml files directly in it, sorted by name")
                : app.add_option("model", model_path, "the model.yaml to check (docs/model-format.md)");
  if (scope.model_required) m->required();
  app.add_option("--backend,-b", backends,
                 std::string(scope.one_backend ? "the compiled path to compare with eager (one; default: the model's)"
                                               : "compiled path to compare with eager; repeatable; overrides check.backends") +
                     " (eager, nnc, trace, decomp, gbc-interp, gbc, ...: see docs/backends.md)");
  if (scope.reference)
    app.add_option("--reference", reference,
                   "the backend the others are compared with (default: eager), e.g. --backend gbc --reference ts-freeze");
  if (scope.cases)
    app.add_option("--cases,-n", cases,
                   std::string("number of input cases (overrides check.cases)") +
                       (scope.given_inputs ? "; 0 with --inputs checks only the given inputs" : ""))
        ->check(whole_number(scope.given_inputs ? 0 : 1, kMaxCount));
  if (scope.given_inputs)
    app.add_option("--inputs", given_inputs,
                   "also run on these exact input values, as cases after the generated ones: a torch.save file of a "
                   "tuple, list or dict of tensors, a folder with manifest.json (repro, --save-inputs) or inputs.json "
                   "(reduce), or a folder of case-K folders; repeatable (docs/importing.md)");
  if (scope.save_cases) {
    app.add_option("--save-inputs", save_inputs, "keep every case's inputs in DIR/case-K (raw tensor files, --inputs reads them)")
        ->check(writable_folder());
    app.add_option("--save-outputs", save_outputs,
                   "keep every case's eager outputs in DIR/case-K, and each backend's in DIR/case-K/BACKEND")
        ->check(writable_folder());
  }
  app.add_option("--seed", seed, "seed of all random inputs (overrides check.seed)")->check(whole_number(0));
  app.add_option("--case", only_case, "run only case K (replays a failure with the same --seed)")
      ->check(whole_number(0, kMaxCount));
  if (scope.shrink)
    app.add_option("--shrink", shrink_path,
                   "with --case: replay that case's shrunk form, the PATH a failure report prints (e.g. 0.2.1)")
        ->check(CLI::Validator(
            [](const std::string& s) { return ShrinkPath::parse(s) ? std::string() : "'" + s + "' is not a shrink path"; },
            "dot-separated shrink indices, e.g. 0.2.1", "SHRINK_PATH"));
  if (scope.tolerances) {
    app.add_option("--tolerances-config", tolerances.presets_path,
                   "a tolerances file whose rtol/atol per dtype override configs/tolerances.yaml's (docs/configs.md); "
                   "check.tolerance, --rtol and --atol win over it");
    app.add_option("--rtol", tolerances.rtol,
                   "relative tolerance over check.tolerance: X (all), DTYPE:X or OUTPUT:X (e.g. y:1e-3); repeatable");
    app.add_option("--atol", tolerances.atol,
                   "absolute tolerance over check.tolerance: X (all), DTYPE:X or OUTPUT:X; repeatable");
    app.add_option("--error-stat", tolerances.error_stat,
                   "what the tolerance and fp64 oracles compare (overrides check.error_stat): elementwise, max, mean, "
                   "quantile or quantile:Q");
  }
  app.add_option("--device", device, "cpu or cuda (overrides check.device)")->check(CLI::IsMember({"cpu", "cuda"}));
  if (scope.fullgraph)
    app.add_flag("--fullgraph", fullgraph,
                 "fail on the first graph break, naming it (like torch.compile(fullgraph=True))");
  std::string passes;
  for (const auto& n : known_pass_names()) passes += (passes.empty() ? "" : ", ") + n;
  app.add_option("--disable-pass", disabled_passes, "switch off a gbc compiler pass by name; repeatable (" + passes + ")");
  app.add_option("--cache-dir", cache_dir, "where compiled kernels are cached (default: $GBCHECK_CACHE_DIR or ~/.cache/gbcheck)");
  app.add_flag("--no-cache", no_cache, "compile every kernel afresh, ignoring the kernel cache");
  std::string channels;
  for (const auto& n : log::channel_names()) channels += n + ", ";
  app.add_option("--log", log_channels,
                 "print compiler events as they happen, like TORCH_LOGS: a comma-separated list of " + channels +
                     "or all (also $GBCHECK_LOGS)");
  app.add_flag("--verbose,-v", verbose, "more detail: every compile event, and info-level logging");
  app.add_option("--trace", trace_dir,
                 "write a structured trace (JSON lines, docs/report.md) into DIR as the run goes; `gbcheck report DIR` renders it "
                 "(also $GBCHECK_TRACE_DIR)");
  app.add_option("--input", import_inputs,
                 "for a TorchScript model (.pt): forward's inputs in order, [NAME=]DTYPE[SHAPE] (docs/importing.md)");
  app.add_option("--dim", import_dims, "for a TorchScript model: a symbolic size of the --input shapes, NAME=MIN:MAX");
  app.add_option("--backends-config", backends_config,
                 "a backends file (docs/adapters.md) whose adapters join those of configs/backends.yaml and "
                 "$GBCHECK_BACKENDS_CONFIG");
  app.add_option("--inject-fault", inject_fault,
                 "TESTING AID: build gbc's kernels with a known bug (kinds: `gbcheck --inject-fault list`)");
}

bool start_trace(const std::string& dir) {
  if (dir.empty()) {
    trace::open_from_environment(invoked_command_line());
    return true;
  }
  if (std::string why = trace::open(dir, invoked_command_line()); !why.empty()) {
    std::cerr << "gbcheck: --trace: " << why << "\n";
    return false;
  }
  return true;
}

bool RunArgs::apply_logging() const {
  if (verbose) log::set_level(log::Level::info);
  if (!start_trace(trace_dir)) return false;
  // $GBCHECK_LOGS is checked as strictly as --log: a typo there would silently log nothing.
  const char* env = std::getenv("GBCHECK_LOGS");
  for (const auto& [where, csv] : {std::pair<std::string, std::string>{"$GBCHECK_LOGS", env ? env : ""},
                                   std::pair<std::string, std::string>{"--log", log_channels}}) {
    if (csv.empty()) continue;
    auto unknown = log::enable_channels(csv);
    if (unknown.empty()) continue;
    std::string known;
    for (const auto& n : log::channel_names()) known += (known.empty() ? "" : ", ") + n;
    std::cerr << "gbcheck: " << where << ": unknown log channel '" << unknown[0] << "' (known: " << known << ", all)\n";
    return false;
  }
  return true;
}

static bool is_torchscript_path(const std::string& path) {
  for (const char* ext : {".pt", ".pth", ".ts"}) {
    const std::string e(ext);
    if (path.size() > e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0) return true;
  }
  return false;
}

Model RunArgs::load() const {
  if (!is_torchscript_path(model_path) && (!import_inputs.empty() || !import_dims.empty())) {
    Diagnostics d;
    d.error({"command line", 0, 0}, "--input and --dim describe a TorchScript model (.pt), not " + model_path,
            "a model.yaml declares its inputs itself");
    throw ModelError(d);
  }
  Model model;
  if (is_torchscript_path(model_path)) {
    ImportResult r = import_torchscript(model_path, parse_import_specs(import_inputs, import_dims));
    if (!r.fidelity.identical) throw InternalError("import of " + model_path + " is not faithful: " + r.fidelity.detail);
    model = std::move(r.model);
    model.path = model_path;
  } else {
    model = load_model_file(model_path);
  }
  if (seed) model.check.seed = static_cast<uint64_t>(*seed);
  if (std::string bad = tolerances.apply(model); !bad.empty()) {
    Diagnostics d;
    d.error({"command line", 0, 0}, bad);
    throw ModelError(d);
  }
  if (trace::enabled()) trace::emit("model_loaded", {{"name", model.name}, {"path", model.path}, {"graph", graph_to_json(model.graph)}});
  return model;
}

std::optional<int> RunArgs::resolve(const Model& model, RunOptions& out) const {
  out = run_options_from_model(model);
  bool from_cli = !backends.empty();
  if (from_cli) out.backends = backends;
  if (cases) out.cases = *cases;
  out.given_cases = load_given_cases(model, given_inputs);
  out.given_input_paths = given_inputs;
  if (out.cases == 0 && out.given_cases.empty()) {
    std::cerr << "gbcheck: --cases 0 checks only the inputs given with --inputs, and there are none\n";
    return kExitInvalid;
  }
  out.save_inputs_dir = save_inputs;
  out.save_outputs_dir = save_outputs;
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
  Diagnostics ref = reference.empty() ? Diagnostics{} : validate_reference(reference);
  if (!reference.empty()) out.reference = reference;
  Diagnostics oracles = validate_check_options(model);
  if (d.has_errors() || ref.has_errors() || oracles.has_errors()) {
    std::cerr << d.str() << ref.str() << oracles.str();
    return kExitInvalid;
  }
  if (!inject_fault.empty()) {
    if (auto stop = check_inject_fault(inject_fault, out.backends)) return stop;
    out.backend_options.inject_fault = inject_fault;
  }
  std::vector<std::string> used = out.backends;
  if (!reference.empty()) used.push_back(reference);
  for (const std::string& b : used) {
    if (!is_external_backend(b)) continue;
    std::string why = backend_unavailable_reason(b);
    if (why.empty()) continue;
    std::cerr << (from_cli || b == reference ? std::string("command line") : model.check.loc_of("backends").str()) << ": error: backend " << b
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
  if (out.backend_options.device == "cuda" && !torch_has_cuda()) {
    std::cerr << (device.empty() ? model.check.loc_of("device").str() : std::string("command line"))
              << ": error: device cuda requested, but this LibTorch (" << torch_version()
              << ") has no usable CUDA device\n"
                 "  run on a machine with an NVIDIA GPU and a CUDA build of LibTorch, or use --device cpu\n";
    return kExitEnvironment;
  }
  return std::nullopt;
}

}  // namespace gbc
