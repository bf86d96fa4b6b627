#include "compiler/runtime/capture.h"

#include <limits>
#include <map>

#include "compiler/ir/op_schema.h"
#include "compiler/passes/effects.h"
#include "compiler/runtime/rewrite_if.h"

namespace gbc {
namespace {

constexpr size_t kNever = std::numeric_limits<size_t>::max();

void collect_uses(const Node& node, std::vector<ValueId>& out) {
  for (const Arg& a : node.args)
    if (a.is_value()) out.push_back(a.value);
  for (const Block& b : node.blocks) {
    for (const Node& n : b.nodes) collect_uses(n, out);
    for (ValueId r : b.results) out.push_back(r);
  }
}

void collect_defs(const Node& node, std::vector<ValueId>& out) {
  out.insert(out.end(), node.outputs.begin(), node.outputs.end());
  for (const Block& b : node.blocks)
    for (const Node& n : b.nodes) collect_defs(n, out);
}

class Capturer {
 public:
  Capturer(const Graph& graph, const CaptureOptions& options) : options_(options) {
    if (options.rewrite_if) {
      IfRewriteResult r = rewrite_pure_ifs(graph);
      program_.graph = std::move(r.graph);
      program_.rewritten_ifs = std::move(r.rewritten);
      refusals_ = std::move(r.refusals);
    } else {
      program_.graph = graph;
    }
  }

  CapturedProgram run() {
    const Graph& g = program_.graph;
    const auto& nodes = g.body.nodes;
    analyze();
    AliasAnalysis aliases(g);
    size_t region_start = 0;
    std::vector<size_t> current;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (current.empty()) region_start = i;
      std::optional<CompileEvent> brk = break_at(nodes[i], aliases, region_start);
      if (!brk) {
        current.push_back(i);
        continue;
      }
      close_region(current);
      Segment island;
      island.kind = Segment::Kind::Island;
      island.nodes = {i};
      island.graph_break = *brk;
      island.island.nodes.push_back(nodes[i]);
      program_.breaks.push_back(*brk);
      program_.segments.push_back(std::move(island));
    }
    close_region(current);
    return std::move(program_);
  }

 private:
  void analyze() {
    const Graph& g = program_.graph;
    def_index_.assign(g.values.size(), kNever);
    last_use_.assign(g.values.size(), 0);
    used_.assign(g.values.size(), false);
    for (size_t i = 0; i < g.body.nodes.size(); ++i) {
      std::vector<ValueId> uses, defs;
      collect_uses(g.body.nodes[i], uses);
      collect_defs(g.body.nodes[i], defs);
      for (ValueId v : uses) {
        last_use_[static_cast<size_t>(v)] = i;
        used_[static_cast<size_t>(v)] = true;
      }
      for (ValueId v : defs) def_index_[static_cast<size_t>(v)] = i;
    }
    for (ValueId v : g.outputs) {
      last_use_[static_cast<size_t>(v)] = kNever;
      used_[static_cast<size_t>(v)] = true;
    }
  }

  std::optional<CompileEvent> break_at(const Node& node, const AliasAnalysis& aliases, size_t region_start) const {
    const Graph& g = program_.graph;
    const OpSchema* schema = find_op_schema(node.op);
    if (schema && schema->cls == OpClass::InPlace && node.args.at(0).is_value()) {
      // A write that the caller, or an earlier compiled graph's output, would see.
      for (ValueId root : aliases.roots(node.args[0].value)) {
        if (g.is_graph_input(root)) return input_mutation_break(g, node, root, /*graph_input=*/true);
        if (def_index_[static_cast<size_t>(root)] < region_start)
          return input_mutation_break(g, node, root, /*graph_input=*/false);
      }
      return std::nullopt;
    }
    std::string refusal;
    if (node.op == OpId::If && node.output() != kNoValue) {
      auto it = refusals_.find(node.output());
      if (it != refusals_.end()) refusal = it->second;
    }
    return graph_break(g, node, options_, refusal);
  }

  void close_region(std::vector<size_t>& nodes) {
    if (nodes.empty()) return;
    const Graph& g = program_.graph;
    Segment seg;
    seg.kind = Segment::Kind::Region;
    seg.region = program_.num_regions++;
    seg.nodes = nodes;
    const size_t first = nodes.front(), last = nodes.back();
    std::vector<bool> seen(g.values.size(), false);
    for (size_t i : nodes) {
      std::vector<ValueId> uses, defs;
      collect_uses(g.body.nodes[i], uses);
      for (ValueId v : uses) {
        size_t d = def_index_[static_cast<size_t>(v)];
        bool outside = d == kNever || d < first;  // graph inputs have no defining node
        if (outside && !seen[static_cast<size_t>(v)]) {
          seen[static_cast<size_t>(v)] = true;
          seg.inputs.push_back(v);
        }
      }
      collect_defs(g.body.nodes[i], defs);
      for (ValueId v : defs)
        if (used_[static_cast<size_t>(v)] && last_use_[static_cast<size_t>(v)] > last) seg.outputs.push_back(v);
    }
    program_.segments.push_back(std::move(seg));
    nodes.clear();
  }

  CaptureOptions options_;
  CapturedProgram program_;
  std::map<ValueId, std::string> refusals_;
  std::vector<size_t> def_index_;  // the top-level node defining each value (kNever: graph input)
  std::vector<size_t> last_use_;   // the last top-level node using it (kNever: a graph output)
  std::vector<bool> used_;
};

}  // namespace

CapturedProgram capture_graph(const Graph& graph, const CaptureOptions& options) {
  return Capturer(graph, options).run();
}

}  // namespace gbc
