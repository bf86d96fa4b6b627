#include "harness/runner/judge_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "compiler/ir/op_schema.h"
#include "compiler/passes/effects.h"
#include "compiler/passes/upcast_fp64.h"
#include "harness/runner/zero_sign_cone.h"

namespace gbc {
namespace {

bool is_training_dropout(const Node& n) { return n.op == OpId::Dropout && n.attr_bool("training", true); }

// Marks every value that depends on a training-mode dropout, in program order; an `if` result is
// random when its condition or either branch's result is.
void taint_block(const Graph& g, const Block& b, std::set<ValueId>& random, std::set<ValueId>& random_writes) {
  for (const auto& n : b.nodes) {
    for (const auto& blk : n.blocks) taint_block(g, blk, random, random_writes);
    bool tainted = is_training_dropout(n);
    for (const auto& a : n.args) tainted = tainted || (a.is_value() && random.count(a.value));
    for (const auto& blk : n.blocks)
      for (ValueId r : blk.results) tainted = tainted || random.count(r);
    if (!tainted) continue;
    for (ValueId o : n.outputs) random.insert(o);
    for (ValueId m : mutated_args(n)) random_writes.insert(m);
  }
}

// The float dtypes of the values a node computes on the way to `out` (out included; graph inputs
// are data, not computation). Nodes inside blocks count through the block's node.
std::set<DType> computed_float_dtypes(const Graph& g, const std::map<ValueId, const Node*>& producers, ValueId out) {
  std::set<DType> dtypes;
  for (ValueId v : upstream_values(producers, out)) {
    const ValueType& t = g.type(v);
    if (producers.count(v) && t.is_tensor() && is_floating(t.dtype)) dtypes.insert(t.dtype);
  }
  return dtypes;
}

}  // namespace

const Tolerance& JudgePlan::output_tolerance(size_t o, DType actual) const {
  auto it = output_tol_by_dtype[o].find(actual);
  return it == output_tol_by_dtype[o].end() ? output_tol[o] : it->second;
}

JudgePlan make_judge_plan(const Model& model) {
  const Graph& g = model.graph;
  const CheckConfig& c = model.check;
  JudgePlan p;
  p.config.oracles = OracleSet::from_names(c.oracles);
  p.config.equal_nan = c.equal_nan;
  p.config.stat = ErrorStat::parse(c.error_stat, c.quantile).value_or(ErrorStat{});
  p.config.fp64_multiplier = c.fp64_multiplier;
  p.iterating = c.iterations.steps > 0;
  p.steps = p.iterating ? c.iterations.steps : 1;

  std::set<ValueId> random, random_writes;
  taint_block(g, g.body, random, random_writes);
  const std::set<ValueId> zero_sign_pinned = values_with_pinned_zero_sign(g);
  const AliasAnalysis alias(g);
  // The graph in each other dtype variant (`dtypes:` lists), with its aliasing: a `to` of a dtype
  // an input has in one variant only returns that input there, so a write through it writes the
  // input (seed 8100868).
  std::vector<Graph> variant_graphs;
  for (int64_t k = 1; k < model.dtype_variants(); ++k) {
    Graph retyped;
    Diagnostics diags;
    if (model.graph_for_variant(k, retyped, diags)) variant_graphs.push_back(std::move(retyped));
  }
  std::vector<AliasAnalysis> variant_aliases;
  for (const Graph& variant : variant_graphs) variant_aliases.emplace_back(variant);
  auto may_be_mutated = [&](ValueId v) {
    return alias.may_be_mutated(v) ||
           std::any_of(variant_aliases.begin(), variant_aliases.end(), [v](const AliasAnalysis& a) { return a.may_be_mutated(v); });
  };
  std::map<ValueId, const Node*> producer;
  for_each_node(g.body, [&](const Node& n) {
    for (ValueId o : n.outputs) producer[o] = &n;
    const std::optional<size_t> thresholded = thresholded_float_arg(g, n);
    p.has_rounding_threshold = p.has_rounding_threshold || thresholded.has_value() || near_tie_argmax(g, n);
    // Eager's own error at a thresholded value bounds what rounding may decide there (case_run.h).
    if (thresholded && n.args[*thresholded].is_value()) p.capture.insert(n.args[*thresholded].value);
    if (const std::optional<size_t> partner = threshold_partner_arg(g, n)) p.capture.insert(n.args[*partner].value);
  });

  std::vector<std::map<ValueId, const Node*>> variant_producers;
  for (const Graph& variant : variant_graphs) variant_producers.push_back(value_producers(variant));
  for (ValueId o : g.outputs) {
    const ValueType& t = g.type(o);
    const std::string name = g.name_of(o);
    p.output_names.push_back(name);
    std::map<DType, Tolerance> by_dtype;
    for (DType d : all_dtypes()) by_dtype.emplace(d, c.tolerance_for(d, name));
    // A float output is as precise as the least precise float its computation stores on the way
    // (a float64 result of a float32 silu: seed 8802227): it gets that dtype's tolerance too, in
    // any variant (tolerances are looked up by the output's dtype, which variants may share).
    auto loosen = [&](const Graph& variant, const std::map<ValueId, const Node*>& producers) {
      const DType out = variant.type(o).dtype;
      if (!is_floating(out)) return;
      Tolerance& tol = by_dtype[out];
      for (DType d : computed_float_dtypes(variant, producers, o)) {
        const Tolerance& through = c.tolerance_for(d, name);
        tol = {std::max(tol.rtol, through.rtol), std::max(tol.atol, through.atol)};
      }
    };
    loosen(g, producer);
    for (size_t k = 0; k < variant_graphs.size(); ++k) loosen(variant_graphs[k], variant_producers[k]);
    p.output_tol.push_back(by_dtype[t.dtype]);
    p.output_tol_by_dtype.push_back(std::move(by_dtype));
    p.output_random.push_back(random.count(o) != 0);
    p.output_zero_sign_pinned.push_back(zero_sign_pinned.count(o) != 0);
    p.any_floating_output = p.any_floating_output || is_floating(t.dtype);
    std::optional<DropoutOutput> d;
    auto it = producer.find(o);
    if (it != producer.end() && it->second->op == OpId::Dropout && !it->second->args.empty() &&
        it->second->args[0].is_value() && !random.count(it->second->args[0].value)) {
      const Node& n = *it->second;
      // The identity of a graph input in eval mode is exact, unless a node writes the input first
      // (a training batch_norm's running stats, add_): then it reads a computed value, which the
      // outputs' oracles judge (seed 8000043).
      const ValueId x = n.args[0].value;
      d = DropoutOutput{x, n.attr_float("p", 0.5), n.attr_bool("training", true),
                        g.is_graph_input(x) && !may_be_mutated(x)};
      p.capture.insert(d->input);
    }
    p.dropout.push_back(d);
  }

  std::set<ValueId> random_roots;
  for (ValueId w : random_writes) random_roots.insert(alias.roots(w).begin(), alias.roots(w).end());
  for (const auto& in : g.inputs) {
    p.input_names.push_back(g.name_of(in.value));
    p.input_tol.push_back(c.tolerance_for(g.type(in.value).dtype, g.name_of(in.value)));
    p.input_mutable.push_back(may_be_mutated(in.value));
    p.input_random.push_back(random_roots.count(in.value) != 0);
    p.fed_by.push_back(-1);
  }
  for (const auto& [out, in] : c.iterations.feedback) {
    int oi = -1, ii = -1;
    for (size_t k = 0; k < p.output_names.size(); ++k)
      if (p.output_names[k] == out) oi = static_cast<int>(k);
    for (size_t k = 0; k < p.input_names.size(); ++k)
      if (p.input_names[k] == in) ii = static_cast<int>(k);
    GBC_INTERNAL_ASSERT(oi >= 0 && ii >= 0, "unvalidated feedback " + out + " -> " + in);
    p.fed_by[static_cast<size_t>(ii)] = oi;
  }
  return p;
}

Diagnostics validate_oracles(const CheckConfig& check) {
  Diagnostics d;
  const auto& known = known_oracle_names();
  std::string all;
  for (const auto& k : known) all += (all.empty() ? "" : ", ") + k;
  for (const auto& n : check.oracles) {
    if (std::find(known.begin(), known.end(), n) != known.end()) continue;
    std::string close = closest_name(n, known);
    d.error(check.loc_of("oracle"), "check.oracle: unknown oracle '" + n + "'",
            close.empty() ? "known oracles: " + all : "did you mean '" + close + "'? known: " + all);
  }
  if (!ErrorStat::parse(check.error_stat, check.quantile))
    d.error(check.loc_of("error_stat"), "check.error_stat: unknown statistic '" + check.error_stat + "'",
            "use elementwise, max, mean or quantile");
  return d;
}

}  // namespace gbc
