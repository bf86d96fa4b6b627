#include "harness/runner/case_run.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "compiler/aten/aten_convert.h"
#include "compiler/aten/eager_executor.h"
#include "compiler/backends/backend_process_error.h"
#include "compiler/cuda/cuda_driver.h"
#include "compiler/passes/upcast_fp64.h"
#include "harness/inputs/rng.h"
#include "oracles/determinism_oracle.h"
#include "oracles/dropout_oracle.h"

namespace gbc {
namespace {

// c10::Error messages carry a C++ backtrace after the first line; users need the first line.
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string without_prefix(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0 ? s.substr(prefix.size()) : s;
}

// TORCH_INTERNAL_ASSERT and friends: a broken invariant inside torch (NNC, TorchScript), not an
// error the inputs provoke.
bool is_internal_assert(const c10::Error& e) { return e.msg().find("INTERNAL ASSERT FAILED") != std::string::npos; }

struct Chain {
  std::vector<at::Tensor> in;
  std::vector<at::Tensor> out;
};

void feed_back(const JudgePlan& plan, Chain& c) {
  for (size_t i = 0; i < plan.fed_by.size(); ++i)
    if (plan.fed_by[i] >= 0) c.in[i] = c.out[static_cast<size_t>(plan.fed_by[i])];
}

// The state of one path under test over the steps.
struct PathRun {
  Chain main, again;  // `again`: the second run of a compiled path (determinism)
  bool check_determinism = false;
  std::vector<std::optional<Verdict>> determinism;  // per output, the first step that differed
};

void add_note(std::vector<std::string>& notes, const std::string& note) {
  if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
}

OutputCheck make_check(const std::string& name, OutputCheck::Kind kind, const Tolerance& tol,
                       std::vector<Verdict> verdicts) {
  OutputCheck oc;
  oc.output = name;
  oc.kind = kind;
  oc.tolerance = tol;
  oc.verdicts = std::move(verdicts);
  Judgement j;
  j.verdicts = oc.verdicts;
  const Verdict* f = j.failing();
  oc.pass = f == nullptr;
  oc.stats = j.stats();
  if (f) {
    oc.oracle = f->oracle;
    oc.detail = f->why;
    oc.min_passing = f->min_passing;
    if (!f->stats.worst_index.empty() || f->stats.numel) oc.stats = f->stats;
  } else if (!oc.verdicts.empty()) {
    oc.oracle = oc.verdicts.front().oracle;
  }
  return oc;
}

// A failing comparison of values that depend on a dropout mask the compiled path drew differently:
// not a divergence, unless the dropout oracle can judge it (a dropout result that is an output).
void excuse_random(std::vector<Verdict>& verdicts, const std::string& why) {
  for (auto& v : verdicts)
    if (v.fails() && v.oracle != oracle_name::kDeterminism && v.oracle != oracle_name::kDropout)
      v.overruled_by = oracle_name::kDropout;
  Verdict note;
  note.oracle = oracle_name::kDropout;
  note.why = why;
  verdicts.push_back(note);
}

// The dropout oracle's settings for one output's dropout, with the output's tolerance and the fp64
// oracle's rule (the kept values' judge where the float64 reference's argument is given).
DropoutSpec dropout_spec(const DropoutOutput& d, const JudgeConfig& cfg) {
  DropoutSpec spec;
  spec.p = d.p;
  spec.training = d.training;
  spec.tol = cfg.tol;
  spec.fp64 = {cfg.fp64_multiplier, cfg.tol.atol, cfg.stat};
  return spec;
}

}  // namespace

std::string reference_disagreement(const JudgePlan& plan, const RunTensors& first, const RunTensors& second, int step,
                                   const std::string& reference) {
  for (size_t o = 0; o < plan.output_names.size(); ++o) {
    const BitwiseDiff d = bitwise_compare(first.outputs[o], second.outputs[o]);
    if (!d.equal)
      return reference + " disagrees with itself" + (plan.iterating ? " at step " + std::to_string(step) : "") + " on output " +
             plan.output_names[o] + ": " + d.summary();
  }
  for (size_t i = 0; i < plan.input_names.size(); ++i) {
    if (!plan.input_mutable[i] || plan.fed_by[i] >= 0) continue;
    const BitwiseDiff d = bitwise_compare(first.inputs[i], second.inputs[i]);
    if (!d.equal) return reference + " disagrees with itself on the updated input " + plan.input_names[i] + ": " + d.summary();
  }
  return "";
}

uint64_t step_seed(uint64_t case_seed, int step) {
  return step == 0 ? case_seed : mix_seed(case_seed, 0x57e9000000ULL + static_cast<uint64_t>(step));
}

bool PathResult::failed() const {
  if (!error.empty()) return true;
  for (const auto& c : checks)
    if (!c.pass) return true;
  return false;
}

std::vector<std::string> PathResult::failed_oracles() const {
  std::vector<std::string> out;
  for (const auto& c : checks)
    for (const auto& n : c.failed_oracles())
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

std::vector<OutputCheck> PathResult::failing_checks() const {
  std::vector<OutputCheck> out;
  for (const auto& c : checks)
    if (!c.pass) out.push_back(c);
  return out;
}

int64_t matching_dtype_variant(const std::vector<const Graph*>& variants, const std::vector<at::Tensor>& tensors) {
  for (size_t k = 0; k < variants.size(); ++k) {
    const Graph& g = *variants[k];
    bool matches = true;
    for (size_t i = 0; matches && i < g.inputs.size() && i < tensors.size(); ++i) {
      const ValueType& t = g.type(g.inputs[i].value);
      matches = !t.is_tensor() || !tensors[i].defined() || tensors[i].scalar_type() == to_aten(t.dtype);
    }
    if (matches) return static_cast<int64_t>(k);
  }
  return 0;
}

CaseRunner::CaseRunner(const Model& model, const JudgePlan& plan, c10::Device device, Reference reference)
    : model_(model), plan_(plan), device_(device), reference_(std::move(reference)) {}

const Graph& CaseRunner::variant_graph(int64_t k) {
  if (k == 0) return model_.graph;
  auto it = variant_graphs_.find(k);
  if (it == variant_graphs_.end()) {
    Graph retyped;
    Diagnostics diags;
    if (!model_.graph_for_variant(k, retyped, diags)) return model_.graph;
    it = variant_graphs_.emplace(k, std::move(retyped)).first;
  }
  return it->second;
}

int64_t CaseRunner::variant_of(const TestCase& tc) {
  std::vector<const Graph*> variants;
  for (int64_t k = 0; k < model_.dtype_variants(); ++k) variants.push_back(&variant_graph(k));
  return matching_dtype_variant(variants, tc.tensors);
}

std::vector<at::Tensor> CaseRunner::run_fp64(const TestCase& tc, std::string& failure,
                                             std::vector<at::Tensor>& inputs_after,
                                             std::map<ValueId, at::Tensor>& captured) {
  const int64_t variant = variant_of(tc);
  std::optional<Graph>& graph = fp64_[variant].plain;
  if (!graph) graph = upcast_fp64(variant_graph(variant));
  return run_fp64_graph(*graph, tc, failure, inputs_after, captured);
}

std::vector<at::Tensor> CaseRunner::run_fp64_nudged(const TestCase& tc, int direction,
                                                     const std::map<ValueId, at::Tensor>& eager,
                                                     const std::map<ValueId, at::Tensor>& reference) {
  const int side = direction > 0 ? 1 : 0;
  const int64_t variant = variant_of(tc);
  Fp64Graphs& graphs = fp64_[variant];
  std::optional<Graph>& graph = graphs.nudged[side];
  std::vector<ValueId>& slack_of = graphs.nudged_slack[side];
  if (!graph) {
    const CheckConfig& c = model_.check;
    const Tolerance f32 = c.dtype_tolerance(DType::Float32), f64 = c.dtype_tolerance(DType::Float64),
                    f16 = c.dtype_tolerance(DType::Float16), bf16 = c.dtype_tolerance(DType::BFloat16);
    graph = upcast_fp64(variant_graph(variant), {direction, f32.rtol, f32.atol, f64.rtol, f64.atol, f16.rtol, f16.atol, bf16.rtol,
                                       bf16.atol, &slack_of});
  }
  // Each thresholded value's slack: eager's largest finite distance from the reference there (0
  // where either was not captured, or the distance is not finite).
  std::vector<at::Tensor> slack;
  for (ValueId v : slack_of) {
    double s = 0;
    auto e = eager.find(v), r = reference.find(v);
    if (e != eager.end() && r != reference.end() && e->second.sizes() == r->second.sizes() && e->second.numel() > 0) {
      const at::Tensor d = (e->second.to(at::kCPU).to(at::kDouble) - r->second.to(at::kCPU).to(at::kDouble)).abs();
      const at::Tensor finite = d.masked_select(d.isfinite());
      if (finite.numel() > 0) s = finite.max().item<double>();
    }
    slack.push_back(at::scalar_tensor(s, at::TensorOptions().dtype(at::kDouble).device(device_)));
  }
  std::string failure;
  std::vector<at::Tensor> inputs_after;
  std::map<ValueId, at::Tensor> captured;
  return run_fp64_graph(*graph, tc, failure, inputs_after, captured, slack);
}

std::vector<at::Tensor> CaseRunner::run_fp64_graph(const Graph& graph, const TestCase& tc, std::string& failure,
                                                   std::vector<at::Tensor>& inputs_after,
                                                   std::map<ValueId, at::Tensor>& captured,
                                                   const std::vector<at::Tensor>& extra_inputs) {
  Chain c;
  c.in = tc.fresh_inputs();
  for (auto& t : c.in)
    if (at::isFloatingType(t.scalar_type())) t = t.to(at::kDouble);
  c.in.insert(c.in.end(), extra_inputs.begin(), extra_inputs.end());
  EagerOptions eo;
  eo.device = device_;
  try {
    for (int s = 0; s < plan_.steps; ++s) {
      capture(graph, c.in, eo, captured);  // upcast_fp64 keeps the graph's value ids
      at::manual_seed(step_seed(tc.seed, s));
      c.out = run_eager(graph, c.in, eo);
      inputs_after = c.in;
      feed_back(plan_, c);
    }
  } catch (const OpError& e) {
    failure = e.what();
    return {};
  } catch (const c10::Error& e) {
    failure = first_line(e.what());
    return {};
  }
  return c.out;
}

void CaseRunner::capture(const Graph& graph, const std::vector<at::Tensor>& in, EagerOptions& eo,
                         std::map<ValueId, at::Tensor>& captured) const {
  if (plan_.capture.empty()) return;
  // on_value sees the values nodes define; a dropout's argument that is a graph input is recorded
  // here.
  for (size_t i = 0; i < graph.inputs.size(); ++i)
    if (plan_.capture.count(graph.inputs[i].value)) captured[graph.inputs[i].value] = in[i].clone();
  eo.on_value = [this, &captured](const Node&, ValueId v, const RtValue& rv) {
    if (plan_.capture.count(v) && !rv.is_scalar()) captured[v] = rv.tensor.clone();
  };
}

CaseResult CaseRunner::run(const TestCase& tc, const std::vector<PathUnderTest>& paths, std::ostream* prints,
                           bool self_check) {
  const Graph& g = model_.graph;
  const OracleSet& oracles = plan_.config.oracles;
  const size_t n_out = g.outputs.size();
  CaseResult result;
  result.paths.resize(paths.size());

  Chain eager, eager_again;
  eager.in = tc.fresh_inputs();
  if (self_check) eager_again.in = tc.fresh_inputs();
  std::vector<PathRun> runs(paths.size());
  for (size_t p = 0; p < paths.size(); ++p) {
    runs[p].main.in = tc.fresh_inputs();
    runs[p].check_determinism = paths[p].compiled && oracles.determinism;
    if (runs[p].check_determinism) runs[p].again.in = tc.fresh_inputs();
    runs[p].determinism.resize(n_out);
  }
  std::map<ValueId, at::Tensor> captured;
  // A reference backend shows no node values and no print output: the dropout oracle then judges
  // only what it can from the outputs.
  auto run_reference = [&](const Graph& graph, const std::vector<at::Tensor>& in, const EagerOptions& eo) {
    if (!reference_.backend) return run_eager(graph, in, eo);
    std::vector<at::Tensor> out = reference_.backend->run(in);
    if (out.size() != n_out)
      throw std::runtime_error("the reference " + reference_.name + " returned " + std::to_string(out.size()) +
                               " outputs, expected " + std::to_string(n_out));
    return out;
  };

  for (int s = 0; s < plan_.steps; ++s) {
    const uint64_t seed = step_seed(tc.seed, s);
    EagerOptions eo;
    eo.device = device_;
    try {
      capture(g, eager.in, eo, captured);
      at::manual_seed(seed);
      eo.print_sink = s == 0 ? prints : nullptr;
      eager.out = run_reference(g, eager.in, eo);
      if (self_check) {
        eo.print_sink = nullptr;
        eo.on_value = nullptr;
        at::manual_seed(seed);
        eager_again.out = run_reference(g, eager_again.in, eo);
      }
    } catch (const OpError& e) {
      result.eager_error = e.what();
      result.eager_error_loc = e.loc();
      return result;
    } catch (const InternalError&) {
      throw;
    } catch (const std::exception& e) {  // a reference backend's own failure (an adapter's, a c10::Error)
      result.eager_error = first_line(e.what());
      return result;
    }
    if (self_check) {
      result.unusable = reference_disagreement(plan_, {eager.out, eager.in}, {eager_again.out, eager_again.in}, s, reference_.name);
      if (!result.unusable.empty()) return result;
    }

    for (size_t p = 0; p < paths.size(); ++p) {
      PathResult& pr = result.paths[p];
      PathRun& run = runs[p];
      if (!pr.error.empty()) continue;
      auto run_path = [&](Chain& c) {
        try {
          at::manual_seed(seed);
          c.out = paths[p].backend->run(c.in);
          // A kernel's fault on the GPU surfaces at the next synchronization, wherever that is:
          // wait here, so that it is blamed on the path that launched the kernel.
          if (device_.is_cuda()) {
            if (std::string fault = CudaDriver::get().synchronize_status(0); !fault.empty()) {
              pr.error = "the GPU faulted running this path's kernels: " + fault;
              result.device_lost = paths[p].backend->name() + ": " + fault;
            }
          }
        } catch (const OpError& e) {
          pr.error = e.what();
          pr.error_loc = e.loc();
        } catch (const InternalError& e) {
          // gbc's own assertion while compiling or running the graph: the compiler's bug, its
          // failure like a divergence (only the harness's own faults are gbcheck bugs, exit 3).
          pr.error = without_prefix(first_line(e.what()), "internal error: ");  // the kind says so
          pr.error_kind = PathErrorKind::InternalError;
        } catch (const BackendProcessError& e) {
          pr.error = first_line(e.what());
          pr.process_failure = true;
        } catch (const c10::Error& e) {
          pr.error = first_line(e.what());
          if (is_internal_assert(e)) pr.error_kind = PathErrorKind::InternalError;
        } catch (const std::exception& e) {
          pr.error = first_line(e.what());
        }
        if (pr.error.empty() && c.out.size() != n_out)
          pr.error = "returned " + std::to_string(c.out.size()) + " outputs, expected " + std::to_string(n_out);
        if (!pr.error.empty() && plan_.iterating) pr.error += " (at step " + std::to_string(s) + ")";
      };
      run_path(run.main);
      if (!result.device_lost.empty()) {
        for (PathResult& other : result.paths)
          if (other.error.empty() && &other != &pr)
            other.error = "not run: the GPU faulted before (" + result.device_lost + ")";
        return result;
      }
      if (!pr.error.empty()) continue;
      if (run.check_determinism) {
        run_path(run.again);
        if (!pr.error.empty()) {
          pr.error = "raised on the second run of the same inputs (nondeterministic): " + pr.error;
          continue;
        }
        for (size_t o = 0; o < n_out; ++o) {
          if (run.determinism[o]) continue;
          Verdict v = determinism_oracle(run.main.out[o], run.again.out[o]);
          if (v.pass) continue;
          if (plan_.iterating) v.why = "at step " + std::to_string(s) + ": " + v.why;
          run.determinism[o] = v;
        }
      }
      if (plan_.iterating) {
        DriftStep ds;
        for (size_t o = 0; o < n_out; ++o) {
          if (plan_.output_random[o]) continue;  // a different mask is not drift
          ErrorStats st = compare_tensors(eager.out[o], run.main.out[o], plan_.output_tolerance(o, from_aten(eager.out[o].scalar_type())), plan_.config.equal_nan);
          ds.ratio = std::max(ds.ratio, st.tol_ratio);
          ds.max_abs = std::max(ds.max_abs, st.max_abs);
          ds.max_rel = std::max(ds.max_rel, st.max_rel);
        }
        pr.drift.push_back(ds);
      }
      feed_back(plan_, run.main);
      if (run.check_determinism) feed_back(plan_, run.again);
    }
    feed_back(plan_, eager);
    if (self_check) feed_back(plan_, eager_again);
  }

  result.eager_outputs = eager.out;
  for (size_t p = 0; p < paths.size(); ++p)
    if (result.paths[p].error.empty()) result.paths[p].outputs = runs[p].main.out;

  // Judging the last step: outputs, then the graph inputs as the runs left them, then drift.
  std::optional<std::vector<at::Tensor>> fp64;
  std::vector<at::Tensor> fp64_inputs;
  std::map<ValueId, at::Tensor> fp64_captured;
  std::string fp64_failure;
  auto ensure_fp64 = [&] {
    if (!fp64) fp64 = run_fp64(tc, fp64_failure, fp64_inputs, fp64_captured);
  };
  auto fp64_output = [&](size_t o) -> at::Tensor {
    ensure_fp64();
    return fp64->empty() ? at::Tensor() : (*fp64)[o];
  };
  auto fp64_input = [&](size_t i) -> at::Tensor {
    ensure_fp64();
    return fp64->empty() || i >= fp64_inputs.size() ? at::Tensor() : fp64_inputs[i];
  };
  // The float64 reference's value of a captured node value (a dropout's argument), if it has one.
  auto fp64_value = [&](ValueId v) -> at::Tensor {
    if (!oracles.fp64 || reference_.backend) return at::Tensor();
    ensure_fp64();
    auto it = fp64_captured.find(v);
    return fp64->empty() || it == fp64_captured.end() ? at::Tensor() : it->second;
  };
  // The references with every thresholded value moved down and up (oracles/threshold_rounding.h).
  std::optional<std::vector<at::Tensor>> fp64_down, fp64_up;
  auto fp64_threshold_bounds = [&](size_t o) -> std::pair<at::Tensor, at::Tensor> {
    ensure_fp64();
    if (!fp64_down) fp64_down = run_fp64_nudged(tc, -1, captured, fp64_captured);
    if (!fp64_up) fp64_up = run_fp64_nudged(tc, +1, captured, fp64_captured);
    if (o >= fp64_down->size() || o >= fp64_up->size()) return {};
    return {(*fp64_down)[o], (*fp64_up)[o]};
  };
  for (size_t p = 0; p < paths.size(); ++p) {
    PathResult& pr = result.paths[p];
    PathRun& run = runs[p];
    if (!pr.error.empty()) continue;
    for (size_t o = 0; o < n_out; ++o) {
      JudgeConfig cfg = plan_.config;
      cfg.tol = plan_.output_tolerance(o, from_aten(eager.out[o].scalar_type()));
      cfg.zero_sign_pinned = plan_.output_zero_sign_pinned[o];
      if (oracles.fp64 && !reference_.backend && plan_.has_rounding_threshold)
        cfg.fp64_threshold_bounds = [&fp64_threshold_bounds, o] { return fp64_threshold_bounds(o); };
      const bool random = plan_.output_random[o];
      std::function<at::Tensor()> ref;
      if (!random) ref = [&fp64_output, o] { return fp64_output(o); };
      std::vector<Verdict> verdicts = judge_tensor(eager.out[o], run.main.out[o], ref, cfg).verdicts;
      if (run.determinism[o]) verdicts.push_back(*run.determinism[o]);
      const std::optional<DropoutOutput>& d = plan_.dropout[o];
      const bool numeric_fail =
          std::any_of(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.fails() && v.oracle != oracle_name::kDeterminism; });
      if (random && numeric_fail) {
        if (d && d->training && oracles.dropout && captured.count(d->input)) {
          // Element by element, another mask is no evidence either way: the dropout oracle decides.
          DropoutSpec spec = dropout_spec(*d, cfg);
          spec.input_fp64 = fp64_value(d->input);
          Verdict dv = dropout_oracle(captured[d->input], run.main.out[o], spec);
          for (auto& v : verdicts)
            if (v.fails() && v.oracle != oracle_name::kDeterminism) v.overruled_by = oracle_name::kDropout;
          if (dv.pass) dv.why = "the compiled path draws another mask than eager; judged statistically: " + dv.why;
          verdicts.push_back(dv);
        } else {
          const std::string why = "output " + plan_.output_names[o] +
                                  " depends on a training-mode dropout's mask, which this path draws differently "
                                  "from eager: not compared element by element (only determinism is checked)";
          excuse_random(verdicts, why);
          add_note(pr.notes, why);
        }
      } else if (d && !d->training && d->input_is_unwritten_graph_input && oracles.dropout) {
        verdicts.push_back(dropout_oracle(eager.out[o], run.main.out[o], dropout_spec(*d, cfg)));
      }
      // Where the float64 reference overrules a failing comparison, the reference was the one that
      // erred: with another backend as the reference, that is its compiler's finding.
      if (reference_.backend && std::any_of(verdicts.begin(), verdicts.end(), [](const Verdict& v) {
            return !v.pass && v.overruled_by == oracle_name::kFp64;
          }))
        add_note(pr.notes, "output " + plan_.output_names[o] + ": where this path and the reference " + reference_.name +
                               " differ, the float64 reference agrees with this path (" + reference_.name + "'s own error)");
      OutputCheck oc = make_check(plan_.output_names[o], OutputCheck::Kind::Output, cfg.tol, std::move(verdicts));
      pr.checks.push_back(std::move(oc));
    }
    if (oracles.state) {
      for (size_t i = 0; i < plan_.input_names.size(); ++i) {
        if (plan_.fed_by[i] >= 0) continue;  // its values are an output's, judged there
        const at::Tensor& after = run.main.in[i];
        std::vector<Verdict> verdicts;
        if (plan_.input_mutable[i]) {
          JudgeConfig cfg = plan_.config;
          cfg.tol = plan_.input_tol[i];
          cfg.oracles.tolerance = true;
          // Where eager's update overflows and the float64 reference's does not (ATen's
          // batch_norm running stats near the float32 maximum), eager is the one that erred.
          std::function<at::Tensor()> ref;
          if (!plan_.input_random[i]) ref = [&fp64_input, i] { return fp64_input(i); };
          verdicts = judge_tensor(eager.in[i], after, ref, cfg).verdicts;
          for (auto& v : verdicts) {
            v.why = v.oracle + ": " + v.why;
            v.oracle = oracle_name::kState;
          }
          if (plan_.input_random[i] &&
              std::any_of(verdicts.begin(), verdicts.end(), [](const Verdict& v) { return v.fails(); })) {
            const std::string why = "the update of " + plan_.input_names[i] +
                                    " depends on a training-mode dropout's mask, which this path draws differently";
            excuse_random(verdicts, why);
            add_note(pr.notes, why);
          }
        } else {
          // Nothing in the model writes this input: the path must leave it exactly as it was.
          BitwiseDiff diff = bitwise_compare(tc.tensors[i], after);
          Verdict v;
          v.oracle = oracle_name::kState;
          if (!diff.equal) {
            v.pass = false;
            v.why = "the path wrote into " + plan_.input_names[i] + ", which the model never writes: " + diff.summary();
            v.min_passing = "none: inputs the model does not mutate must stay bit-identical";
          }
          verdicts.push_back(v);
        }
        pr.checks.push_back(make_check(plan_.input_names[i], OutputCheck::Kind::State, plan_.input_tol[i], std::move(verdicts)));
      }
    }
    if (plan_.iterating && oracles.drift) {
      std::string names;
      for (const auto& n : plan_.output_names) names += (names.empty() ? "" : ", ") + n;
      pr.checks.push_back(make_check(names, OutputCheck::Kind::Drift, plan_.output_tol.empty() ? Tolerance{} : plan_.output_tol[0],
                                     {drift_oracle(pr.drift)}));
    }
    if (!fp64_failure.empty())
      add_note(pr.notes, "the float64 reference could not be computed (" + fp64_failure + "): the fp64 oracle did not judge");
  }
  return result;
}

}  // namespace gbc
