#include "harness/report/graph_json.h"

#include "harness/report/program_json.h"

namespace gbc {

nlohmann::json graph_to_json(const Graph& g) {
  nlohmann::json inputs = nlohmann::json::array(), nodes = nlohmann::json::array(), outputs = nlohmann::json::array();
  for (const GraphInput& in : g.inputs)
    inputs.push_back({{"id", g.name_of(in.value)}, {"role", in.role == GraphInput::Role::Param ? "param" : "input"}});
  int unnamed = 0;
  for (const Node& n : g.body.nodes) {
    nlohmann::json reads = nlohmann::json::array();
    // An `if` reads what its branches read too: the picture draws it as one node.
    auto add_reads = [&](const Node& node) {
      for (const Arg& a : node.args)
        if (a.is_value()) reads.push_back(g.name_of(a.value));
    };
    add_reads(n);
    for (const Block& b : n.blocks) for_each_node(b, add_reads);
    nlohmann::json outs = nlohmann::json::array();
    for (ValueId v : n.outputs) outs.push_back(g.name_of(v));
    const std::string id = n.outputs.empty() ? n.op + "#" + std::to_string(unnamed++) : g.name_of(n.outputs.front());
    nodes.push_back({{"id", id}, {"op", n.op}, {"reads", reads}, {"outputs", outs}, {"loc", source_loc_json(n.loc)}});
  }
  for (ValueId v : g.outputs) outputs.push_back(g.name_of(v));
  return {{"name", g.name}, {"inputs", inputs}, {"nodes", nodes}, {"outputs", outputs}};
}

}  // namespace gbc
