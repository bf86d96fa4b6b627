#include "harness/report/program_json.h"

#include <algorithm>

#include "compiler/support/trace.h"
#include "harness/report/json_report.h"

namespace gbc {
namespace {

nlohmann::json step_json(const SegmentDescription& seg, const StepDescription& step) {
  nlohmann::json locs = nlohmann::json::array();
  for (const SourceLoc& l : step.locs) locs.push_back(source_loc_json(l));
  return {{"kind", StepDescription::kind_name(step.kind)}, {"name", step.name}, {"model_nodes", step_model_nodes(seg, step)},
          {"nodes", step.nodes},                           {"locs", locs},      {"note", step.note}};
}

}  // namespace

nlohmann::json source_loc_json(const SourceLoc& l) {
  if (!l.valid() && l.file.empty()) return nullptr;
  nlohmann::json j = {{"file", l.file}, {"line", l.line}, {"col", l.col}};
  if (!l.origin.empty()) j["python"] = l.origin;  // an imported node's line in the user's code
  return j;
}

// A step node that kept its model node's name is that node; one a pass made (a decomposition) is
// found by its location, which passes keep on everything they decompose into (an imported model's
// nodes may share one location).
std::vector<std::string> step_model_nodes(const SegmentDescription& seg, const StepDescription& step) {
  std::vector<std::string> out;
  auto add = [&](size_t i) {
    std::string name = seg.node_names[i].empty() ? seg.ops[i] : seg.node_names[i];
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  };
  for (size_t k = 0; k < step.locs.size(); ++k) {
    const std::string printed = k < step.nodes.size() ? step.nodes[k].substr(0, step.nodes[k].find(':')) : "";
    auto same_name = std::find(seg.node_names.begin(), seg.node_names.end(), printed);
    if (!printed.empty() && same_name != seg.node_names.end()) {
      add(static_cast<size_t>(same_name - seg.node_names.begin()));
      continue;
    }
    for (size_t i = 0; i < seg.locs.size(); ++i)
      if (seg.locs[i].str() == step.locs[k].str()) add(i);
  }
  return out;
}

nlohmann::json program_to_json(const ProgramDescription& prog) {
  nlohmann::json program = nlohmann::json::array();
  for (const SegmentDescription& seg : prog.segments) {
    if (seg.island) {
      program.push_back({{"kind", "graph_break"}, {"event", compile_event_to_json(seg.graph_break)}});
      continue;
    }
    nlohmann::json nodes = nlohmann::json::array();
    for (size_t i = 0; i < seg.nodes.size(); ++i)
      nodes.push_back({{"id", seg.node_names[i]}, {"op", seg.ops[i]}, {"loc", source_loc_json(seg.locs[i])}});
    nlohmann::json steps = nlohmann::json::array(), entries = nlohmann::json::array();
    if (!seg.entries.empty())
      for (const StepDescription& s : seg.entries.front().region.steps) steps.push_back(step_json(seg, s));
    for (const EntryDescription& e : seg.entries) entries.push_back({{"calls", e.calls}, {"guards", e.guards}});
    program.push_back({{"kind", "graph"}, {"index", seg.region}, {"nodes", nodes}, {"inputs", seg.inputs},
                       {"outputs", seg.outputs}, {"steps", steps}, {"entries", entries}, {"eager_calls", seg.eager_calls}});
  }
  return program;
}

void trace_program(const std::string& backend_name, const Backend& backend) {
  if (!trace::enabled()) return;
  const auto* runtime = dynamic_cast<const GraphRuntime*>(&backend);
  if (!runtime) return;
  const ProgramDescription d = runtime->describe();
  nlohmann::json rewrites = nlohmann::json::array();
  for (const SourceLoc& l : d.rewritten_ifs) rewrites.push_back(source_loc_json(l));
  trace::emit("program", {{"backend", backend_name}, {"program", program_to_json(d)}, {"rewritten_ifs", rewrites}});
}

}  // namespace gbc
