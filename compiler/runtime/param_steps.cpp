#include "compiler/runtime/param_steps.h"

#include <algorithm>
#include <set>

#include "compiler/ir/op_schema.h"
#include "compiler/passes/effects.h"

namespace gbc {
namespace {

// Whether the node's result depends on nothing but its operands, and running it has no effect a
// later call could observe. Data-dependent ops bind dims while they run, so they must always run.
bool pure(const Node& node) {
  if (!node.blocks.empty() || has_side_effect(node) || !mutated_args(node).empty()) return false;
  const OpSchema* schema = find_op_schema(node.op);
  GBC_INTERNAL_ASSERT(schema != nullptr, "param steps: no schema for op '" + op_name(node.op) + "'");
  return schema->cls != OpClass::DataDependent && schema->cls != OpClass::Control;
}

std::vector<const Node*> nodes_of(const Graph& g, const PartitionPlan& partition, const Step& step) {
  std::vector<const Node*> out;
  if (step.kind == Step::Kind::Kernel) {
    for (size_t i : partition.groups[step.index].nodes) out.push_back(&g.body.nodes[i]);
  } else {
    out.push_back(&g.body.nodes[step.index]);
  }
  return out;
}

// The values a step reads from outside itself (a kernel's group inputs, an ATen node's operands).
std::vector<ValueId> reads_of(const Graph& g, const PartitionPlan& partition, const Step& step) {
  if (step.kind == Step::Kind::Kernel) return partition.groups[step.index].inputs;
  std::vector<ValueId> out;
  for (const Arg& a : g.body.nodes[step.index].args)
    if (a.is_value()) out.push_back(a.value);
  return out;
}

}  // namespace

ParamSteps find_param_steps(const Graph& graph, const PartitionPlan& partition, const std::set<ValueId>& written_after) {
  ParamSteps out;
  out.folded.assign(partition.steps.size(), false);
  // A param the graph writes into may change without its version counter moving (ATen updates
  // batch_norm's running stats in place without one), so its readers always run.
  const AliasAnalysis aliases(graph);
  std::set<ValueId> params;
  for (const GraphInput& in : graph.inputs)
    if (in.role == GraphInput::Role::Param && !aliases.may_be_mutated(in.value) && !written_after.count(in.value))
      params.insert(in.value);
  if (params.empty()) return out;

  std::set<ValueId> derived = params;  // params and the values folded steps compute
  std::vector<ValueId> sources;
  std::set<ValueId> folded_values;
  for (size_t s = 0; s < partition.steps.size(); ++s) {
    const Step& step = partition.steps[s];
    if (step.kind == Step::Kind::Eager) continue;
    const std::vector<ValueId> reads = reads_of(graph, partition, step);
    // A step reading no value is a constant (full): the pipeline folds those, and caching one would
    // only keep its memory alive.
    if (reads.empty()) continue;
    if (!std::all_of(reads.begin(), reads.end(), [&](ValueId v) { return derived.count(v) != 0; })) continue;
    const std::vector<const Node*> nodes = nodes_of(graph, partition, step);
    bool ok = std::all_of(nodes.begin(), nodes.end(), [](const Node* n) { return pure(*n); });
    for (const Node* n : nodes)
      for (ValueId o : n->outputs) {
        ok = ok && !aliases.may_be_mutated(o);
        for (ValueId r : graph.outputs) ok = ok && !aliases.may_alias(o, r);
      }
    if (!ok) continue;
    out.folded[s] = true;
    for (ValueId v : reads)
      if (params.count(v) && std::find(sources.begin(), sources.end(), v) == sources.end()) sources.push_back(v);
    for (const Node* n : nodes)
      for (ValueId o : n->outputs) {
        derived.insert(o);
        folded_values.insert(o);
      }
  }

  // Only what an unfolded step reads needs keeping between calls.
  std::set<ValueId> kept;
  for (size_t s = 0; s < partition.steps.size(); ++s) {
    if (out.folded[s]) continue;
    for (ValueId v : reads_of(graph, partition, partition.steps[s]))
      if (folded_values.count(v)) kept.insert(v);
  }
  out.results.assign(kept.begin(), kept.end());
  out.sources = std::move(sources);
  return out;
}

}  // namespace gbc
