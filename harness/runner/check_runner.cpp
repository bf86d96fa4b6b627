#include "harness/runner/check_runner.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#include "compiler/ir/op_schema.h"
#include "compiler/runtime/backend_device.h"
#include "compiler/support/trace.h"
#include "harness/inputs/input_generator.h"
#include "harness/inputs/saved_cases.h"
#include "harness/inputs/user_inputs.h"
#include "harness/runner/case_run.h"
#include "harness/runner/judge_plan.h"
#include "harness/runner/prepare_path.h"
#include "harness/version.h"
#include "oracles/oracle_set.h"

namespace gbc {
namespace {

// The trace's `case` event: a case's verdict for one backend, with its oracles' reasons.
void trace_case(int index, uint64_t seed, const std::string& backend, const PathResult& pr) {
  nlohmann::json outputs = nlohmann::json::array();
  for (const OutputCheck& c : pr.checks)
    outputs.push_back({{"output", c.output}, {"kind", OutputCheck::kind_name(c.kind)}, {"pass", c.pass}, {"oracle", c.oracle},
                       {"detail", c.detail}, {"min_passing", c.min_passing}});
  trace::emit("case", {{"backend", backend}, {"case", index}, {"seed", seed}, {"pass", !pr.failed()},
                       {"failed_oracles", pr.failed_oracles()}, {"error", pr.error}, {"outputs", outputs}});
}

void check_expectations(const Model& model, const RunOptions& opt, BackendReport& rep) {
  const Expectation ex = model.check.expect.for_backend(rep.backend);
  const BackendStats& st = rep.stats;
  auto list_events = [&](CompileEvent::Kind kind) {
    std::string s;
    for (const auto& e : st.events)
      if (e.kind == kind) s += "\n      " + e.code + (e.loc.valid() ? " at " + e.loc.str() : "") + ": " + e.message;
    return s;
  };
  if (ex.graph_breaks && st.graph_breaks != *ex.graph_breaks)
    rep.expectation_failures.push_back("graph_breaks: expected " + std::to_string(*ex.graph_breaks) + ", got " +
                                       std::to_string(st.graph_breaks) + list_events(CompileEvent::Kind::GraphBreak));
  if (ex.fallbacks && st.fallbacks != *ex.fallbacks)
    rep.expectation_failures.push_back("fallbacks: expected " + std::to_string(*ex.fallbacks) + ", got " +
                                       std::to_string(st.fallbacks) + list_events(CompileEvent::Kind::Fallback));
  if (ex.recompiles && st.recompiles != *ex.recompiles)
    rep.expectation_failures.push_back("recompiles: expected " + std::to_string(*ex.recompiles) + ", got " +
                                       std::to_string(st.recompiles) + list_events(CompileEvent::Kind::Recompile));
  if (opt.fullgraph) {
    for (const auto& e : st.events)
      if (e.kind == CompileEvent::Kind::GraphBreak) {
        rep.expectation_failures.push_back("fullgraph: graph break " + e.code + (e.loc.valid() ? " at " + e.loc.str() : "") + ": " + e.message +
                                           (e.hint.empty() ? "" : " (hint: " + e.hint + ")"));
        break;  // like torch.compile(fullgraph=True): the first break is the error
      }
  }
}

const BackendInfo* backend_info(const std::string& name, const RunOptions& opt) {
  for (const auto& b : opt.extra_backends)
    if (b.name == name) return &b;
  return find_backend(name);
}

std::unique_ptr<Backend> make_path(const BackendInfo& info, const Model& model, const RunOptions& opt) {
  return prepare_path(info, model.graph, opt.backend_options);
}

CaseFailure make_failure(const TestCase& tc, const PathResult& r) {
  CaseFailure f;
  f.index = tc.index;
  f.seed = tc.seed;
  f.shrink_path = tc.shrink.str();
  f.dims = tc.dims;
  f.inputs = tc.descriptions;
  f.error = r.error;
  f.error_loc = r.error_loc;
  f.error_kind = r.error_kind;
  f.outputs = r.failing_checks();
  return f;
}

// Shrinks a failing case on fresh backends (as `--case K --shrink P` replays it): a candidate
// counts when the path raises again (if it raised) or one of the same oracles fails again.
void shrink_failure(const Model& model, const RunOptions& opt, const BackendInfo& info, const InputGenerator& gen,
                    CaseRunner& runner, const TestCase& tc, const PathResult& original, CaseFailure& f) {
  if (original.process_failure) {
    f.shrink_note = "not shrunk: " + info.name + "'s process failed, and every try would start it again; replay the case with --case";
    return;
  }
  const bool raised = !original.error.empty();
  const std::vector<std::string> oracles = original.failed_oracles();
  std::optional<PathResult> last;
  auto fails = [&](const TestCase& c) {
    std::unique_ptr<Backend> b = make_path(info, model, opt);
    CaseResult res = runner.run(c, {{b.get(), info.compiled}}, nullptr, /*self_check=*/false);
    if (!res.eager_error.empty() || !res.unusable.empty()) return false;
    const PathResult& r = res.paths[0];
    bool same = raised ? !r.error.empty() && r.error_kind == original.error_kind : false;
    if (!raised && r.error.empty())
      for (const auto& o : r.failed_oracles())
        same = same || std::find(oracles.begin(), oracles.end(), o) != oracles.end();
    if (same) last = r;
    return same;
  };
  if (!fails(tc)) {
    f.shrink_note = "not shrunk: on a fresh " + info.name +
                    " backend this case passes, so the failure depends on state from earlier cases "
                    "(compile caches, recompiles); replay it with all cases";
    return;
  }
  InputGenerator::Shrunk s = gen.shrink_case(tc.index, tc.shrink, fails, opt.max_shrink_tries);
  if (s.accepted == 0) {
    f.shrink_note = "already minimal: none of its " + std::to_string(s.tried) + " shrinks fails the same way";
    return;
  }
  ShrunkCase sc;
  sc.path = s.smallest.shrink.str();
  sc.dims = s.smallest.dims;
  sc.inputs = s.smallest.descriptions;
  sc.error = last->error;
  sc.error_loc = last->error_loc;
  sc.outputs = last->failing_checks();
  sc.tried = s.tried;
  sc.steps = s.accepted;
  sc.budget_exhausted = s.budget_exhausted;
  f.shrunk = std::move(sc);
}

// --save-inputs and --save-outputs: the case's inputs as it began, and the last step's outputs.
void save_case(const Model& model, const JudgePlan& plan, const RunOptions& opt, const TestCase& tc, const CaseResult& cr) {
  if (!opt.save_inputs_dir.empty()) {
    NamedTensors inputs;
    for (size_t i = 0; i < model.inputs.size(); ++i) inputs.emplace_back(model.inputs[i].name, tc.tensors[i]);
    save_case_folder(opt.save_inputs_dir, tc.index, "inputs", inputs);
  }
  if (opt.save_outputs_dir.empty() || cr.eager_outputs.empty()) return;
  auto named = [&](const std::vector<at::Tensor>& outputs) {
    NamedTensors out;
    for (size_t o = 0; o < outputs.size() && o < plan.output_names.size(); ++o) out.emplace_back(plan.output_names[o], outputs[o]);
    return out;
  };
  std::vector<std::pair<std::string, NamedTensors>> backends;
  for (size_t p = 0; p < cr.paths.size() && p < opt.backends.size(); ++p)
    if (!cr.paths[p].outputs.empty()) backends.emplace_back(opt.backends[p], named(cr.paths[p].outputs));
  save_case_folder(opt.save_outputs_dir, tc.index, "outputs", named(cr.eager_outputs), backends);
}

}  // namespace

RunOptions::RunOptions() = default;
RunOptions::RunOptions(const RunOptions&) = default;
RunOptions::RunOptions(RunOptions&&) noexcept = default;
RunOptions& RunOptions::operator=(const RunOptions&) = default;
RunOptions& RunOptions::operator=(RunOptions&&) noexcept = default;
RunOptions::~RunOptions() = default;

RunOptions run_options_from_model(const Model& model) {
  RunOptions o;
  const CheckConfig& c = model.check;
  o.backends = c.backends;
  o.cases = c.cases;
  o.backend_options.device = c.device;
  o.backend_options.dynamic = c.dynamic;
  o.backend_options.cache_size_limit = c.cache_size_limit;
  o.backend_options.capture_scalar_outputs = c.capture_scalar_outputs;
  o.backend_options.reorderable_logging = c.reorderable_logging;
  o.backend_options.rewrite_if = c.rewrite_if;
  return o;
}

Diagnostics validate_check_options(const Model& model) { return validate_oracles(model.check); }

namespace {

std::vector<std::string> known_backend_names() {
  std::vector<std::string> known;
  for (const auto& b : backend_registry()) known.push_back(b.name);
  return known;
}

void check_backend_name(const std::string& name, const SourceLoc& loc, const std::string& what, Diagnostics& d) {
  if (find_backend(name)) return;
  const std::vector<std::string> known = known_backend_names();
  std::string close = closest_name(name, known);
  std::string all;
  for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
  d.error(loc, what + "unknown backend '" + name + "'",
          close.empty() ? "known backends: " + all : "did you mean '" + close + "'? known: " + all);
}

}  // namespace

Diagnostics validate_reference(const std::string& name) {
  Diagnostics d;
  check_backend_name(name, {"command line", 0, 0}, "--reference: ", d);
  return d;
}

Diagnostics validate_backends(const Model& model, const std::vector<std::string>& names, bool from_command_line) {
  Diagnostics d;
  const std::vector<std::string> known = known_backend_names();
  SourceLoc loc = from_command_line ? SourceLoc{"command line", 0, 0} : model.check.loc_of("backends");
  if (names.empty()) d.error(loc, "no backends to check", "name one with --backend or check.backends");
  for (const auto& n : names) check_backend_name(n, loc, "", d);
  for (const auto& [backend, e] : model.check.expect.per_backend) {
    if (find_backend(backend)) continue;
    std::string close = closest_name(backend, known);
    d.error(model.check.loc_of("expect." + backend), "check.expect: '" + backend + "' is neither an expectation nor a backend",
            close.empty() ? "keys are graph_breaks, fallbacks, recompiles, min_speedup, or backend names" : "did you mean '" + close + "'?");
  }
  return d;
}

CheckReport start_report(const Model& model, const RunOptions& opt) {
  const JudgePlan plan = make_judge_plan(model);
  CheckReport rep;
  rep.model_name = model.name;
  rep.model_path = model.path;
  rep.device = opt.backend_options.device;
  rep.injected_fault = opt.backend_options.inject_fault;
  rep.torch_version = TORCH_VERSION;
  rep.gbcheck_version = kGbcheckVersion;
  rep.seed = model.check.seed;
  rep.cases = opt.only_case ? 1 : opt.cases + static_cast<int>(opt.given_cases.size());
  rep.only_case = opt.only_case;
  rep.given_inputs = opt.given_input_paths;
  rep.generated_cases = opt.cases;
  if (opt.only_case) rep.only_shrink = opt.shrink_path.str();
  rep.reference = opt.reference;
  rep.oracles = plan.config.oracles.names();
  rep.error_stat = plan.config.stat.str();
  rep.iterations = plan.iterating ? plan.steps : 0;
  return rep;
}

CheckReport run_check(const Model& model, const RunOptions& opt) {
  auto start = std::chrono::steady_clock::now();
  if (Diagnostics d = validate_check_options(model); d.has_errors()) throw ModelError(d);
  const JudgePlan plan = make_judge_plan(model);
  CheckReport rep = start_report(model, opt);

  c10::Device device = backend_device(opt.backend_options);
  InputGenerator gen(model, device);
  std::unique_ptr<Backend> reference;
  if (opt.reference != "eager") {
    const BackendInfo* info = backend_info(opt.reference, opt);
    GBC_INTERNAL_ASSERT(info != nullptr, "unvalidated reference " + opt.reference);
    reference = make_path(*info, model, opt);
  }
  CaseRunner runner(model, plan, device, {reference.get(), opt.reference});

  std::vector<const BackendInfo*> infos;
  std::vector<std::unique_ptr<Backend>> backends;
  std::vector<PathUnderTest> paths;
  for (const auto& name : opt.backends) {
    const BackendInfo* info = backend_info(name, opt);
    GBC_INTERNAL_ASSERT(info != nullptr, "unvalidated backend " + name);
    infos.push_back(info);
    backends.push_back(make_path(*info, model, opt));
    paths.push_back({backends.back().get(), info->compiled});
    rep.backends.emplace_back();
    rep.backends.back().backend = name;
  }

  std::ostringstream prints;
  const int first = opt.only_case.value_or(0);
  const int end = opt.only_case ? first + 1 : opt.cases + static_cast<int>(opt.given_cases.size());
  for (int k = first; k < end; ++k) {
    const bool is_given = !opt.given_cases.empty() && k >= opt.cases;
    const TestCase tc = gen.run_case(k, opt.cases, opt.given_cases, opt.only_case ? opt.shrink_path : ShrinkPath{});
    CaseResult cr = runner.run(tc, paths, k == first ? &prints : nullptr);
    save_case(model, plan, opt, tc, cr);
    if (!cr.eager_error.empty()) {
      rep.eager_error = cr.eager_error;
      rep.eager_error_loc = cr.eager_error_loc;
      rep.eager_error_case = k;
      break;
    }
    if (!cr.unusable.empty()) {
      rep.unusable.push_back({k, tc.seed, cr.unusable});
      if (opt.on_progress) opt.on_progress(k - first + 1, end - first);
      continue;
    }
    ++rep.cases_judged;
    for (size_t bi = 0; bi < backends.size(); ++bi) {
      BackendReport& br = rep.backends[bi];
      const PathResult& pr = cr.paths[bi];
      ++br.cases_run;
      for (const auto& c : pr.checks) {
        if (c.kind != OutputCheck::Kind::Output) continue;
        if (std::isfinite(c.stats.max_abs)) br.worst_abs = std::max(br.worst_abs, c.stats.max_abs);
        if (std::isfinite(c.stats.max_rel)) br.worst_rel = std::max(br.worst_rel, c.stats.max_rel);
      }
      for (const auto& n : pr.notes)
        if (std::find(br.notes.begin(), br.notes.end(), n) == br.notes.end()) br.notes.push_back(n);
      if (plan.iterating && br.drift.size() < kMaxDriftSeries) {
        DriftSeries ds;
        ds.case_index = k;
        ds.steps = pr.drift;
        for (const auto& c : pr.checks)
          if (c.kind == OutputCheck::Kind::Drift) ds.pass = c.pass;
        br.drift.push_back(std::move(ds));
      }
      if (trace::enabled()) trace_case(k, tc.seed, br.backend, pr);
      if (!pr.failed()) continue;
      ++br.cases_failed;
      if (static_cast<int>(br.failures.size()) >= opt.max_failures_kept) continue;
      CaseFailure f = make_failure(tc, pr);
      if (is_given)
        f.shrink_note = "not shrunk: the user's own inputs (--inputs) are checked as given";
      else if (br.failures.empty() && opt.max_shrink_tries > 0 && cr.device_lost.empty())
        shrink_failure(model, opt, *infos[bi], gen, runner, tc, pr, f);
      br.failures.push_back(std::move(f));
    }
    if (opt.on_progress) opt.on_progress(k - first + 1, end - first);
    if (!cr.device_lost.empty()) {
      // The CUDA context is unusable after a kernel fault: nothing more can run in this process.
      const std::string note = "case " + std::to_string(k) + " stopped the check: the GPU faulted (" + cr.device_lost +
                               ") and a faulted CUDA context cannot run anything more; later cases were not run";
      for (BackendReport& br : rep.backends) br.notes.push_back(note);
      break;
    }
  }
  rep.print_output = prints.str();
  for (size_t bi = 0; bi < backends.size(); ++bi) {
    if (opt.on_backend_done) opt.on_backend_done(opt.backends[bi], *backends[bi]);
    rep.backends[bi].stats = backends[bi]->stats();
    if (infos[bi]->compiled && rep.eager_error.empty()) check_expectations(model, opt, rep.backends[bi]);
  }
  rep.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return rep;
}

}  // namespace gbc
