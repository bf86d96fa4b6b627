#include "compiler/runtime/kernel_plan.h"

#include <algorithm>

#include "compiler/ir/op_schema.h"
#include "compiler/passes/effects.h"
#include "compiler/passes/pass_manager.h"
#include "compiler/support/log.h"
#include "compiler/support/trace.h"

namespace gbc {
namespace {

bool disabled(const PlanOptions& o, const std::string& name) {
  return std::find(o.disabled_passes.begin(), o.disabled_passes.end(), name) != o.disabled_passes.end();
}

// Why an ATen step of a compiled graph is a fallback ("" when ATen runs it by design).
std::string fallback_reason(const Node& node, const Step& step, const PlanOptions& options) {
  const OpSchema* schema = find_op_schema(node.op);
  GBC_INTERNAL_ASSERT(schema != nullptr, "plan: no schema for op '" + op_name(node.op) + "'");
  if (step.kind == Step::Kind::Eager) {
    if (schema->cls == OpClass::HostScalar && options.capture_scalar_outputs) return "";
    return step.reason;
  }
  if (step.kind == Step::Kind::Library && schema->cls == OpClass::Normalization) return step.reason;
  return "";
}

std::string fallback_hint(const Node& node) {
  const OpSchema* schema = find_op_schema(node.op);
  if (schema && schema->cls == OpClass::InPlace)
    return "use the out-of-place op; functionalize removes in-place ops only when nothing observes the write";
  if (node.op == OpId::BatchNorm) return "batch_norm in training mode has no lowering; use training: false to compile it";
  return "keep the decompose pass enabled, and give the reduced dims sizes that cannot be 0";
}

// A copy_ into a graph input may run after every step when nothing after it reads the input or a
// value that may share its storage (they would see the old values); its source becomes an extra
// output, so it is materialized. Removes those nodes from the body and returns them in order.
std::vector<Node> take_write_backs(Graph& g) {
  const AliasAnalysis aliases(g);
  std::vector<Node>& nodes = g.body.nodes;
  std::vector<bool> deferred(nodes.size(), false);
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = nodes[i];
    if (n.op != OpId::CopyInPlace || !n.args[0].is_value() || !g.is_graph_input(n.args[0].value)) continue;
    const ValueId target = n.args[0].value;
    auto sees_target = [&](ValueId v) { return v == n.output() || aliases.may_alias(v, target); };
    bool read_later = false;
    for (ValueId out : g.outputs) read_later = read_later || sees_target(out);
    for (size_t j = i + 1; j < nodes.size() && !read_later; ++j) {
      std::set<ValueId> uses;
      collect_uses(nodes[j], uses);
      for (ValueId v : uses) read_later = read_later || sees_target(v);
    }
    deferred[i] = !read_later;
  }
  std::vector<Node> kept, write_backs;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!deferred[i]) {
      kept.push_back(std::move(nodes[i]));
      continue;
    }
    if (nodes[i].args[1].is_value()) g.outputs.push_back(nodes[i].args[1].value);
    write_backs.push_back(std::move(nodes[i]));
  }
  nodes = std::move(kept);
  return write_backs;
}

}  // namespace

KernelPlan plan_kernels(const Graph& region, const PlanOptions& options) {
  KernelPlan plan;
  PassRunOptions popt;
  popt.disabled.insert(options.disabled_passes.begin(), options.disabled_passes.end());
  plan.graph = run_graph_pipeline(region, popt);
  Graph& g = plan.graph;

  plan.num_outputs = g.outputs.size();
  std::vector<Node> kept;
  kept.reserve(g.body.nodes.size());
  for (Node& n : g.body.nodes) {
    if (n.op != OpId::Print) {
      kept.push_back(std::move(n));
      continue;
    }
    for (const Arg& a : n.args)
      if (a.is_value()) g.outputs.push_back(a.value);
    plan.prints.push_back(std::move(n));
  }
  g.body.nodes = std::move(kept);
  plan.write_backs = take_write_backs(g);

  PartitionOptions part;
  part.fuse = !disabled(options, "fuse");
  plan.partition = partition_block(g, g.body, part);

  if (disabled(options, "fold_params")) {
    plan.param_steps.folded.assign(plan.partition.steps.size(), false);
  } else {
    std::set<ValueId> written;
    for (const Node& w : plan.write_backs) written.insert(w.args[0].value);
    plan.param_steps = find_param_steps(g, plan.partition, written);
  }

  LowerOptions lopt;
  lopt.target = options.target;
  lopt.fault = options.fault;
  lopt.half_numbers_in_float32 = options.half_numbers_in_float32;
  for (size_t k = 0; k < plan.partition.groups.size(); ++k)
    plan.kernels.push_back(lower_group(g, g.body, plan.partition.groups[k], "fused_" + std::to_string(k), lopt));

  for (const Step& step : plan.partition.steps) {
    if (step.kind == Step::Kind::Kernel) continue;
    const Node& node = g.body.nodes[step.index];
    if (step.kind == Step::Kind::Extern) ++plan.extern_calls;
    std::string why = fallback_reason(node, step, options);
    if (why.empty()) continue;
    CompileEvent e;
    e.kind = CompileEvent::Kind::Fallback;
    e.code = "FB003";
    e.message = op_name(node.op) + " has no lowering in a compiled graph (" + why + "); it runs on ATen";
    e.hint = fallback_hint(node);
    e.loc = node.loc;
    e.op = op_name(node.op);
    plan.fallbacks.push_back(std::move(e));
  }
  GBC_LOG_CHANNEL(kernels) << g.name << ": partition\n" << print_partition(g, g.body, plan.partition);
  if (trace::enabled()) trace::emit("partition", {{"graph", g.name}, {"partition", print_partition(g, g.body, plan.partition)}});
  return plan;
}

std::vector<std::string> step_node_names(const KernelPlan& plan, const Step& step) {
  const Graph& g = plan.graph;
  std::vector<std::string> out;
  if (step.kind == Step::Kind::Kernel) {
    for (size_t i : plan.partition.groups[step.index].nodes) out.push_back(g.name_of(g.body.nodes[i].output()));
  } else {
    const Node& n = g.body.nodes[step.index];
    out.push_back(n.output() == kNoValue ? op_name(n.op) : g.name_of(n.output()));
  }
  return out;
}

}  // namespace gbc
