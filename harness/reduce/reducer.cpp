#include "harness/reduce/reducer.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>

#include "compiler/ir/op_schema.h"
#include "compiler/runtime/backend_device.h"
#include "compiler/support/hash.h"
#include "harness/inputs/input_generator.h"
#include "harness/model/model_writer.h"
#include "harness/reduce/model_edits.h"
#include "harness/reduce/sandboxed_check.h"
#include "harness/runner/check_runner.h"

namespace gbc {
namespace {

struct NondeterministicCheck {
  std::string note;
};
struct CheckBudgetSpent {};

std::string tensor_key(const at::Tensor& t) {
  at::Tensor c = t.contiguous().cpu();
  std::string key = std::string(c10::toString(c.scalar_type())) + "[";
  for (int64_t s : c.sizes()) key += std::to_string(s) + ",";
  std::string_view bytes(static_cast<const char*>(c.data_ptr()), c.nbytes());
  return key + "]" + content_hash(bytes);
}

const BackendInfo* backend_info(const std::string& name, const ReduceOptions& opt) {
  for (const BackendInfo& b : opt.extra_backends)
    if (b.name == name) return &b;
  return find_backend(name);
}

// Delta debugging over one failing case: the current subject always fails with the original
// signature; each phase tries edits and keeps those that still fail the same way.
class Reducer {
 public:
  using Pass = bool (Reducer::*)();

  /// The passes a schedule may name, in configs/reduce.yaml's order.
  static const std::vector<std::pair<std::string, Pass>>& passes() {
    static const std::vector<std::pair<std::string, Pass>> table = {
        {"remove_outputs", &Reducer::remove_outputs},
        {"remove_nodes", &Reducer::remove_nodes_ddmin},
        {"lift_outputs", &Reducer::lift_outputs},
        {"contiguous_inputs", &Reducer::contiguous_inputs},
        {"shrink_dims", &Reducer::shrink_dims},
        {"simplify_dtypes", &Reducer::simplify_dtypes},
        {"simplify_attributes", &Reducer::simplify_attributes},
        {"simplify_values", &Reducer::simplify_values},
    };
    return table;
  }

  Reducer(const ReduceOptions& options, const ReduceConfig& config, const BackendInfo& backend, ReduceResult& result)
      : opt_(options), config_(config), result_(result), start_(std::chrono::steady_clock::now()) {
    check_.backend = &backend;
    if (options.reference != "eager") check_.reference = backend_info(options.reference, options);
    check_.backend_options = options.backend_options;
    check_.fullgraph = options.fullgraph;
    check_.limits = options.limits;
  }

  void set_case(int index, uint64_t case_seed) {
    check_.case_index = index;
    check_.case_seed = case_seed;
  }

  CaseOutcome check(const ReductionSubject& s) {
    if (opt_.max_checks > 0 && result_.checks >= opt_.max_checks) throw CheckBudgetSpent{};
    ++result_.checks;
    CaseOutcome out = check_case_sandboxed(s.model, s.inputs(), check_);
    report(false);
    return out;
  }

  /// Takes `s` as the starting point; false when it does not fail like `original`.
  bool start_from(ReductionSubject s, const FailureSignature& original) {
    original_ = original;
    CaseOutcome o = check(s);
    if (!o.failed() || !o.signature.same_failure(original_)) return false;
    accept(std::move(s), o.signature);
    return true;
  }

  void reduce() {
    phase_ = "start";
    report(true);
    std::vector<Pass> schedule;
    for (const std::string& name : config_.schedule)
      for (const auto& [known, pass] : passes())
        if (known == name) schedule.push_back(pass);
    GBC_INTERNAL_ASSERT(schedule.size() == config_.schedule.size(), "the reduce schedule names an unknown pass");
    for (bool changed = true; changed;) {
      changed = false;
      for (Pass pass : schedule) changed |= (this->*pass)();
    }
  }

  const ReductionSubject& current() const { return current_; }
  const FailureSignature& signature() const { return signature_; }

  double elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  void report(bool accepted) {
    if (!opt_.on_progress) return;
    ReduceProgress p;
    p.phase = phase_;
    p.nodes_left = current_.node_count();
    p.candidates = result_.candidates;
    p.checks = result_.checks;
    p.elapsed_s = elapsed_s();
    p.accepted = accepted;
    opt_.on_progress(p);
  }

  void accept(ReductionSubject s, const FailureSignature& sig) {
    current_key_ = key_of(s);
    current_ = std::move(s);
    signature_ = sig;
    eager_ = eager_values(current_);
    report(true);
  }

  std::string key_of(const ReductionSubject& s) const {
    std::string key = write_model_yaml(s.model);
    for (const TensorSpec* spec : s.model.all_tensor_specs()) {
      const LayoutPlan layout = s.layout(spec->name);
      key += "\n" + spec->name + "=" + tensor_key(s.values.at(spec->name)) + " " + layout_name(layout.layout) + " " +
             std::to_string(layout.dim);
    }
    return content_hash(key);
  }

  // Builds, checks, rechecks and, when it still fails the same way, accepts a candidate.
  bool try_candidate(ReductionSubject cand) {
    ++result_.candidates;
    try {
      cand.model = rebuild(cand.model);
    } catch (const ModelError&) {
      return false;  // an edit that makes the model invalid is simply not a candidate
    }
    for (const TensorSpec* spec : cand.model.all_tensor_specs())
      if (!cand.values.count(spec->name)) return false;
    cand.drop_unfit_layouts();
    const std::string key = key_of(cand);
    // An edit the rebuild undoes (an attribute the loader puts back with its default) is no step.
    if (key == current_key_ || rejected_.count(key)) return false;
    CaseOutcome first = check(cand);
    if (!first.failed() || !first.signature.same_failure(original_)) {
      rejected_.insert(key);
      return false;
    }
    CaseOutcome second = check(cand);
    if (!second.failed() || !second.signature.same_failure(original_)) {
      throw NondeterministicCheck{"a candidate with " + std::to_string(cand.node_count()) + " nodes failed (" +
                                  first.signature.str() + ") and then " +
                                  (second.failed() ? "failed differently (" + second.signature.str() + ")" : "passed") +
                                  " on the same inputs: the check is nondeterministic, so no reduction can be trusted"};
    }
    ++result_.accepted;
    accept(std::move(cand), first.signature);
    return true;
  }

  bool remove_outputs() {
    phase_ = "outputs";
    bool changed = false;
    for (size_t i = 0; i < current_.model.graph.outputs.size() && current_.model.graph.outputs.size() > 1;) {
      ReductionSubject cand = current_;
      std::vector<ValueId> outs = cand.model.graph.outputs;
      outs.erase(outs.begin() + static_cast<std::ptrdiff_t>(i));
      set_outputs(cand, outs);
      if (try_candidate(std::move(cand))) changed = true;
      else ++i;
    }
    return changed;
  }

  // ddmin over the top-level nodes, removing chunks (the complement test of Zeller's algorithm):
  // the list is recomputed after each accepted removal, since dead code goes with it.
  bool remove_nodes_ddmin() {
    phase_ = "nodes";
    bool changed = false;
    size_t parts = 2;
    for (;;) {
      std::vector<size_t> items = removable_nodes(current_.model);
      if (items.empty()) break;
      parts = std::min(std::max<size_t>(parts, 1), items.size());
      bool reduced = false;
      for (size_t p = 0; p < parts && !reduced; ++p) {
        const size_t lo = items.size() * p / parts, hi = items.size() * (p + 1) / parts;
        std::vector<size_t> chunk(items.begin() + static_cast<std::ptrdiff_t>(lo), items.begin() + static_cast<std::ptrdiff_t>(hi));
        if (chunk.empty()) continue;
        // Bypassing keeps a chunk downstream of the bug connected to it; cutting (new inputs with
        // the real values) keeps a chunk upstream of a value-dependent bug feeding it what it saw.
        for (Removal how : {Removal::Bypass, Removal::Cut}) {
          ReductionSubject cand = current_;
          if (!remove_nodes(cand, chunk, eager_, how)) continue;
          if (try_candidate(std::move(cand))) {
            reduced = changed = true;
            parts = std::max<size_t>(parts - 1, 2);
            break;
          }
        }
      }
      if (reduced) continue;
      if (parts >= items.size()) break;
      parts = std::min(parts * 2, items.size());
    }
    return changed;
  }

  // An output whose producer cannot be bypassed (its arguments have other types) moves up to one
  // of those arguments, which takes the producer away.
  bool lift_outputs() {
    phase_ = "outputs";
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      const Graph& g = current_.model.graph;
      for (size_t i = 0; i < g.outputs.size() && !again; ++i) {
        const Node* producer = nullptr;
        for (const Node& n : g.body.nodes)
          if (std::find(n.outputs.begin(), n.outputs.end(), g.outputs[i]) != n.outputs.end()) producer = &n;
        if (!producer || is_in_place_op(producer->op)) continue;
        for (const Arg& a : producer->args) {
          if (!a.is_value() || g.is_graph_input(a.value) || !g.type(a.value).is_tensor()) continue;
          if (std::find(g.outputs.begin(), g.outputs.end(), a.value) != g.outputs.end()) continue;
          ReductionSubject cand = current_;
          std::vector<ValueId> outs = g.outputs;
          outs[i] = a.value;
          set_outputs(cand, outs);
          if (try_candidate(std::move(cand))) {
            again = changed = true;
            break;
          }
        }
      }
    }
    return changed;
  }

  // A view input made contiguous: the layout stays only where the failure needs it.
  bool contiguous_inputs() {
    phase_ = "layouts";
    bool changed = false;
    std::vector<std::string> names;
    for (const auto& [name, layout] : current_.layouts) names.push_back(name);
    for (const std::string& name : names) {
      ReductionSubject cand = current_;
      cand.layouts.erase(name);
      changed |= try_candidate(std::move(cand));
    }
    return changed;
  }

  bool shrink_dims() {
    phase_ = "dims";
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      std::vector<std::string> names;
      for (const auto& [name, range] : current_.model.graph.dims.ranges()) names.push_back(name);
      // The upper half when the lower one loses what the failure needs (a NaN near the end).
      for (const std::string& name : names)
        for (Half keep : {Half::Lower, Half::Upper}) {
          ReductionSubject cand = current_;
          if (halve_dim(cand, name, keep) && try_candidate(std::move(cand))) {
            again = changed = true;
            break;
          }
        }
      for (int64_t size : literal_sizes(current_.model))
        for (Half keep : {Half::Lower, Half::Upper}) {
          ReductionSubject cand = current_;
          if (halve_literal_size(cand, size, keep) && try_candidate(std::move(cand))) {
            again = changed = true;
            break;
          }
        }
    }
    return changed;
  }

  bool simplify_dtypes() {
    phase_ = "dtypes";
    bool changed = false;
    std::vector<std::pair<std::string, DType>> specs;
    for (const TensorSpec* s : current_.model.all_tensor_specs()) specs.push_back({s->name, s->dtype});
    for (const auto& [name, dtype] : specs) {
      std::optional<DType> simpler = simpler_dtype(dtype);
      if (!simpler || !current_.values.count(name)) continue;
      ReductionSubject cand = current_;
      set_input_dtype(cand, name, *simpler);
      changed |= try_candidate(std::move(cand));
    }
    return changed;
  }

  bool simplify_attributes() {
    phase_ = "attributes";
    bool changed = false;
    for (size_t i = 0; i < current_.model.graph.body.nodes.size(); ++i) {
      std::vector<std::string> keys;
      for (const auto& [k, v] : current_.model.graph.body.nodes[i].attrs) keys.push_back(k);
      for (const std::string& key : keys) {
        if (i >= current_.model.graph.body.nodes.size()) break;
        const Node& node = current_.model.graph.body.nodes[i];
        auto it = node.attrs.find(key);
        if (it == node.attrs.end()) continue;
        ReductionSubject dropped = current_;
        dropped.model.graph.body.nodes[i].attrs.erase(key);
        if (try_candidate(std::move(dropped))) {
          changed = true;
          continue;
        }
        for (const AttrValue& simpler : simpler_attrs(it->second)) {
          ReductionSubject cand = current_;
          cand.model.graph.body.nodes[i].attrs[key] = simpler;
          if (try_candidate(std::move(cand))) {
            changed = true;
            break;
          }
        }
      }
      if (i >= current_.model.graph.body.nodes.size()) break;
      for (size_t j = 0; j < current_.model.graph.body.nodes[i].args.size(); ++j) {
        const Arg arg = current_.model.graph.body.nodes[i].args[j];
        if (arg.is_value()) continue;
        for (const Scalar& simpler : simpler_scalars(arg.scalar)) {
          ReductionSubject cand = current_;
          cand.model.graph.body.nodes[i].args[j] = Arg::number(simpler);
          if (try_candidate(std::move(cand))) {
            changed = true;
            break;
          }
        }
      }
    }
    return changed;
  }

  // Which elements matter: whole tensors to 0 or 1 first, then ever smaller chunks to 0.
  bool simplify_values() {
    phase_ = "values";
    // Small tensors down to single elements; large ones to 1/max_parts (checks grow with the parts).
    const int64_t small_tensor = config_.values.small_tensor, max_parts_of_large = config_.values.max_parts;
    bool changed = false;
    std::vector<std::string> names;
    for (const TensorSpec* s : current_.model.all_tensor_specs()) names.push_back(s->name);
    for (const std::string& name : names) {
      if (!current_.values.count(name)) continue;
      const at::Tensor t = current_.values.at(name);
      const int64_t numel = t.numel();
      if (numel == 0) continue;
      const std::optional<double> constant = constant_value(t);
      bool filled = false;
      for (double fill : {0.0, 1.0}) {
        if (filled || (constant && *constant == fill)) break;
        ReductionSubject cand = current_;
        cand.values[name] = at::full_like(t, fill);
        filled = try_candidate(std::move(cand));
      }
      changed |= filled;
      if (filled || constant) continue;
      const int64_t max_parts = numel <= small_tensor ? numel : max_parts_of_large;
      for (int64_t parts = 2; parts < 2 * max_parts && parts / 2 < numel; parts *= 2) {
        const int64_t chunk = (numel + parts - 1) / parts;
        for (int64_t p = 0; p * chunk < numel; ++p) {
          at::Tensor flat = current_.values.at(name).reshape({-1}).clone();
          at::Tensor part = flat.narrow(0, p * chunk, std::min(chunk, numel - p * chunk));
          if (part.eq(0).all().item<bool>()) continue;
          part.zero_();
          ReductionSubject cand = current_;
          cand.values[name] = flat.reshape(t.sizes());
          changed |= try_candidate(std::move(cand));
        }
      }
    }
    return changed;
  }

  const ReduceOptions& opt_;
  const ReduceConfig& config_;
  ReduceResult& result_;
  CaseCheck check_;
  std::chrono::steady_clock::time_point start_;
  std::string phase_ = "start";
  FailureSignature original_;
  FailureSignature signature_;
  ReductionSubject current_;
  std::string current_key_;
  std::map<ValueId, at::Tensor> eager_;
  std::set<std::string> rejected_;
};

ReductionSubject subject_of(const Model& model, const TestCase& tc) {
  ReductionSubject s;
  s.model = model;
  std::vector<const TensorSpec*> specs = model.all_tensor_specs();
  GBC_INTERNAL_ASSERT(specs.size() == tc.tensors.size(), "case tensors do not match the model's inputs");
  for (size_t i = 0; i < specs.size(); ++i) {
    const at::Tensor t = tc.tensors[i].cpu();
    s.values[specs[i]->name] = t.contiguous();
    if (const LayoutPlan layout = layout_of(t); layout.layout != Layout::Contiguous) s.layouts[specs[i]->name] = layout;
  }
  return s;
}

// Inputs whose failing values are one constant are written as `dist: const`, so that the model's
// own drawn inputs come closer to (or equal) the failing ones.
void write_constants(ReductionSubject& s) {
  for (auto* specs : {&s.model.inputs, &s.model.params})
    for (TensorSpec& spec : *specs)
      if (std::optional<double> c = constant_value(s.values.at(spec.name))) {
        spec.dist.kind = ValueDist::Kind::Const;
        spec.dist.a = *c;
        spec.dist.explicit_in_model = true;
      }
}

}  // namespace

std::string ReduceResult::status_name(Status status) {
  switch (status) {
    case Status::Reduced: return "reduced";
    case Status::NotFailing: return "not-failing";
    case Status::Nondeterministic: return "nondeterministic";
  }
  return "unknown";
}

std::string ReduceResult::replay_command(const std::string& path) const {
  std::string cmd = "gbcheck check " + path + " --backend " + backend + (reference == "eager" ? "" : " --reference " + reference) +
                    " --case " + std::to_string(replay_case);
  return inject_fault.empty() ? cmd : cmd + " --inject-fault " + inject_fault;
}

const std::vector<std::string>& reduction_pass_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& [name, pass] : Reducer::passes()) out.push_back(name);
    return out;
  }();
  return names;
}

namespace {

// reduce_model's work once the backends are known; throws CheckBudgetSpent when --max-checks ends
// it before the failing case is settled.
void reduce_within_budget(const Model& model, const ReduceOptions& options, const ReduceConfig& config,
                          const std::vector<const BackendInfo*>& infos, ReduceResult& result) {
  const std::vector<std::string> names = options.backend.empty() ? model.check.backends : std::vector<std::string>{options.backend};
  // The replay of the written model (below) runs within --max-checks too: one check is kept for it.
  ReduceOptions reducing = options;
  if (reducing.max_checks > 1) --reducing.max_checks;
  result.seed = model.check.seed;
  result.inject_fault = options.backend_options.inject_fault;
  result.reference = options.reference;
  result.model = model;
  result.nodes_before = result.nodes_after = static_cast<int>(model.graph.node_count());
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

  // The failing case: the first case (or --case) on which one of the backends fails, twice alike.
  InputGenerator gen(model, backend_device(options.backend_options));
  const int drawn = options.generated_cases >= 0 ? options.generated_cases : model.check.cases;
  std::vector<int> cases;
  if (options.only_case) cases.push_back(*options.only_case);
  else
    for (int k = 0; k < drawn + static_cast<int>(options.given_cases.size()); ++k) cases.push_back(k);
  std::unique_ptr<Reducer> reducer;
  ReductionSubject failing;
  for (int k : cases) {
    TestCase tc = gen.run_case(k, drawn, options.given_cases);
    ReductionSubject s = subject_of(model, tc);
    for (const BackendInfo* info : infos) {
      auto r = std::make_unique<Reducer>(reducing, config, *info, result);
      r->set_case(k, tc.seed);
      CaseOutcome o = r->check(s);
      if (!o.failed()) continue;
      result.backend = info->name;
      result.case_index = k;
      result.original = o.signature;
      CaseOutcome again = r->check(s);
      if (!again.failed() || !again.signature.same_failure(o.signature)) {
        result.status = ReduceResult::Status::Nondeterministic;
        result.note = "case " + std::to_string(k) + " failed (" + o.signature.str() + ") and then " +
                      (again.failed() ? "failed differently (" + again.signature.str() + ")" : "passed") +
                      " on the same inputs: the check is nondeterministic";
        result.signature = o.signature;
        result.elapsed_s = elapsed();
        return;
      }
      reducer = std::move(r);
      failing = std::move(s);
      break;
    }
    if (reducer) break;
  }
  if (!reducer) {
    result.status = ReduceResult::Status::NotFailing;
    result.note = "no case fails on " + (names.size() == 1 ? names[0] : "any of the backends") +
                  (options.only_case ? " (case " + std::to_string(*options.only_case) + ")" : "");
    result.elapsed_s = elapsed();
    return;
  }

  // Fixed dims make halving possible; a failure that needs symbolic dims keeps them.
  ReductionSubject pinned = failing;
  pin_dims(pinned);
  pinned.model = rebuild(pinned.model);
  if (!reducer->start_from(std::move(pinned), result.original)) {
    ReductionSubject plain = failing;
    plain.model = rebuild(plain.model);
    if (!reducer->start_from(std::move(plain), result.original)) {
      result.status = ReduceResult::Status::Nondeterministic;
      result.note = "the failing case stopped failing when rerun from the rewritten model";
      result.signature = result.original;
      result.elapsed_s = elapsed();
      return;
    }
  }
  result.status = ReduceResult::Status::Reduced;
  try {
    reducer->reduce();
  } catch (const NondeterministicCheck& e) {
    result.status = ReduceResult::Status::Nondeterministic;
    result.note = e.note;
  } catch (const CheckBudgetSpent&) {
    result.budget_exhausted = true;
  }

  ReductionSubject best = reducer->current();
  best.model.check.backends = {result.backend};
  ReductionSubject with_constants = best;
  write_constants(with_constants);
  try {
    with_constants.model = rebuild(with_constants.model);
    best = std::move(with_constants);
  } catch (const ModelError&) {
    best.model = rebuild(best.model);  // a constant the format cannot take for that dtype: keep the dists
  }
  result.signature = reducer->signature();
  result.nodes_after = best.node_count();
  for (const TensorSpec* spec : best.model.all_tensor_specs())
    result.inputs.push_back({spec->name, best.values.at(spec->name), best.layout(spec->name)});

  // Whether the written model reproduces with its own drawn inputs, and at which case.
  if (result.status == ReduceResult::Status::Reduced) {
    ReduceOptions replaying = options;
    replaying.max_checks = options.max_checks > 0 ? std::max(options.max_checks - result.checks, 1) : 0;
    replaying.on_progress = nullptr;
    ReduceResult scratch;
    Reducer replay(replaying, config, *backend_info(result.backend, options), scratch);
    InputGenerator drawn(best.model, backend_device(options.backend_options));
    try {
      for (int k = 0; k < std::min(best.model.check.cases, config.replay_cases); ++k) {
        TestCase tc = drawn.make_case(k);
        replay.set_case(k, tc.seed);
        CaseOutcome o = replay.check(subject_of(best.model, tc));
        if (o.failed() && o.signature.same_failure(result.original)) {
          result.reproduces_with_drawn_inputs = true;
          result.replay_case = k;
          break;
        }
      }
    } catch (const CheckBudgetSpent&) {
      result.budget_exhausted = true;
    }
    result.checks += scratch.checks;
  }
  result.model = std::move(best.model);
  result.elapsed_s = elapsed();
}

}  // namespace

ReduceResult reduce_model(const Model& model, const ReduceOptions& options) {
  if (Diagnostics d = validate_check_options(model); d.has_errors()) throw ModelError(d);
  const ReduceConfig config = options.config ? *options.config : load_reduce_config();
  if (std::vector<ConfigProblem> problems = reduce_config_problems(config); !problems.empty()) {
    Diagnostics d;
    for (const ConfigProblem& p : problems) d.error({"<reduce config>", 0, 0}, p.message);
    throw ConfigError(d);
  }
  std::vector<std::string> names = options.backend.empty() ? model.check.backends : std::vector<std::string>{options.backend};
  auto unknown = [](const std::string& name) {
    Diagnostics d;
    d.error({"<command line>", 0, 0}, "unknown backend '" + name + "'", "`gbcheck check --help` lists the backends");
    return ModelError(d);
  };
  std::vector<const BackendInfo*> infos;
  for (const std::string& name : names) {
    const BackendInfo* info = backend_info(name, options);
    if (!info) throw unknown(name);
    infos.push_back(info);
  }
  if (options.reference != "eager" && !backend_info(options.reference, options)) throw unknown(options.reference);
  ReduceResult result;
  try {
    reduce_within_budget(model, options, config, infos, result);
  } catch (const CheckBudgetSpent&) {  // spent before a failing case was settled
    result.status = ReduceResult::Status::NotFailing;
    result.budget_exhausted = true;
    result.note = "--max-checks " + std::to_string(options.max_checks) + " ran out before a failing case was confirmed";
  }
  return result;
}

}  // namespace gbc
