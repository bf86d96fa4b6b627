#include "compiler/runtime/aten_region.h"

#include <sstream>

#include "compiler/aten/eager_executor.h"
#include "compiler/ir/generic_op.h"
#include "compiler/ir/printer.h"

namespace gbc {
namespace {

class AtenRegion : public RegionExecutable {
 public:
  explicit AtenRegion(Graph graph) : graph_(std::move(graph)) {
    for (const Node& n : graph_.body.nodes) {
      profile_names_.push_back("aten " + op_name(n.op));
      has_prints_ = has_prints_ || n.op == OpId::Print;
    }
  }

  std::vector<RtValue> run(const std::vector<RtValue>& inputs, const DimBindings& dims, RunContext& ctx) override {
    std::vector<RtValue> env(graph_.values.size());
    for (size_t i = 0; i < inputs.size(); ++i) env[static_cast<size_t>(graph_.inputs[i].value)] = inputs[i];
    DimBindings bindings = dims;
    std::ostringstream prints;
    std::ostream* print_sink = has_prints_ && ctx.print_sink ? &prints : nullptr;
    for (size_t i = 0; i < graph_.body.nodes.size(); ++i) {
      ProfileScope scope(ctx.profiler, profile_names_[i], "aten");
      run_node_on_aten(graph_, graph_.body.nodes[i], env, bindings, print_sink, ctx.device);
    }
    if (print_sink) *ctx.print_sink << prints.str();
    std::vector<RtValue> outputs;
    outputs.reserve(graph_.outputs.size());
    for (ValueId v : graph_.outputs) outputs.push_back(env[static_cast<size_t>(v)]);
    return outputs;
  }

  RegionDescription describe() const override {
    RegionDescription d;
    d.graph_text = print_graph(graph_);
    for (const Node& n : graph_.body.nodes) {
      StepDescription s;
      s.kind = StepDescription::Kind::Aten;
      s.name = op_display_name(n);
      s.nodes.push_back(print_node(graph_, n));
      s.locs.push_back(n.loc);
      d.steps.push_back(std::move(s));
    }
    return d;
  }

 private:
  Graph graph_;
  std::vector<std::string> profile_names_;
  bool has_prints_ = false;
};

}  // namespace

std::unique_ptr<RegionExecutable> make_aten_region(Graph graph) { return std::make_unique<AtenRegion>(std::move(graph)); }

void run_node_on_aten(const Graph& graph, const Node& node, std::vector<RtValue>& env, DimBindings& dims,
                      std::ostream* print_sink, c10::Device device) {
  std::vector<RtValue> args;
  args.reserve(node.args.size());
  for (const Arg& a : node.args) {
    if (!a.is_value()) {
      args.push_back(RtValue::of(a.scalar));
      continue;
    }
    const RtValue& v = env[static_cast<size_t>(a.value)];
    GBC_INTERNAL_ASSERT(v.is_scalar() || v.tensor.defined(), "'" + graph.name_of(a.value) + "' is used before it is computed");
    args.push_back(v);
  }
  std::vector<RtValue> outs = run_aten_node(graph, node, args, dims, print_sink, device);
  for (size_t i = 0; i < node.outputs.size() && i < outs.size(); ++i)
    env[static_cast<size_t>(node.outputs[i])] = std::move(outs[i]);
}

}  // namespace gbc
