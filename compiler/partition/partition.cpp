// The fusion partitioner (partition.h): classifies nodes, grows groups greedily in program order
// (joining the groups that compute a node's operands, else one that reads the same input), checks
// each candidate for one iteration space and for cycles, then schedules the steps.
#include "compiler/partition/partition.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <vector>

#include "compiler/ir/infer.h"
#include "compiler/ir/op_schema.h"
#include "compiler/ir/printer.h"

namespace gbc {
namespace {

enum class NodeClass { Elementwise, Reduction, Extern, Library, Eager };

struct Classified {
  NodeClass cls = NodeClass::Eager;
  std::string reason;
  // Nothing moves across a barrier: side effects (print, RNG, running stats, in-place writes) and
  // host round trips keep their place in program order.
  bool barrier = false;
};

Classified classify(const Graph& graph, const Node& node) {
  const OpSchema* schema = find_op_schema(node.op);
  GBC_INTERNAL_ASSERT(schema != nullptr, "partition: no schema for op '" + op_name(node.op) + "'");
  auto eager = [](std::string reason) { return Classified{NodeClass::Eager, std::move(reason), true}; };
  auto library = [](std::string reason, bool barrier = false) {
    return Classified{NodeClass::Library, std::move(reason), barrier};
  };
  switch (schema->cls) {
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Where:
    case OpClass::Clamp: return {NodeClass::Elementwise, "", false};
    case OpClass::Cast:
      // ATen's `to` of a tensor that has the dtype already returns the tensor itself: an in-place
      // write through it reaches its input (found by the fuzzer, seed 8100868), so it runs on ATen,
      // as a view op does (constant folding removes it first: constant_fold.cpp).
      if (node.op == OpId::To && !node.args.empty() && node.args[0].is_value() && !node.outputs.empty() &&
          graph.type(node.args[0].value).dtype == graph.type(node.output()).dtype)
        return library("a cast to the dtype it has returns its input");
      return {NodeClass::Elementwise, "", false};
    case OpClass::Reduction: return {NodeClass::Reduction, "", false};
    case OpClass::Extern: return {NodeClass::Extern, "", false};
    case OpClass::Normalization:
      if (node.op == OpId::BatchNorm && node.attr_bool("training", false))
        return library("batch_norm in training mode updates its running stats", true);
      return library("not decomposed into primitives");
    case OpClass::View: return library("view op");
    case OpClass::Cat: return library("cat");
    case OpClass::Creation: return library("creates a tensor");
    case OpClass::Random:
      if (node.attr_bool("training", true)) return library("random: keeps its place in the RNG sequence", true);
      return library("dropout (identity when not training)");
    case OpClass::Custom:
      if (node.attr_string("meta", "none") == "same_as_input") return library("custom kernel with meta");
      return eager("custom kernel '" + node.attr_string("name", "") + "' has no meta: its output type is unknown");
    case OpClass::Effect: return eager("print has a side effect");
    case OpClass::HostScalar: return eager("item copies a tensor value to the host");
    case OpClass::Control: return eager("data-dependent control flow");
    case OpClass::DataDependent: return eager("output size depends on the data");
    case OpClass::InPlace: return eager("in-place update of its first argument");
  }
  internal_error("partition: unhandled op class for '" + op_name(node.op) + "'");
}

bool shapes_equal(const DimSpace& dims, const SymShape& a, const SymShape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (dims.equal(a[i], b[i]) != Truth::Always) return false;
  return true;
}

class Partitioner {
 public:
  Partitioner(const Graph& graph, const Block& block, const PartitionOptions& options)
      : g_(graph), block_(block), options_(options), n_(block.nodes.size()) {}

  PartitionPlan run() {
    analyze_nodes();
    form_groups();
    PartitionPlan plan;
    std::vector<int> final_id(groups_.size(), -1);
    for (size_t gi = 0; gi < groups_.size(); ++gi) {
      if (groups_[gi].empty()) continue;
      final_id[gi] = static_cast<int>(plan.groups.size());
      plan.groups.push_back(describe_group(groups_[gi]));
    }
    for (size_t i = 0; i < n_; ++i)
      if (group_of_[i] >= 0) group_of_[i] = final_id[static_cast<size_t>(group_of_[i])];
    plan.steps = order_steps(plan);
    return plan;
  }

 private:
  struct NodeInfo {
    Classified cls;
    size_t segment = 0;
    std::vector<int> producers;  // in-block producers of tensor/scalar operands (-1: from outside)
    SymShape out_shape;
    SymShape in_shape;           // reductions: the reduced input's shape
    std::vector<int> dims;       // reductions: reduced dims
  };

  void analyze_nodes() {
    producer_.assign(g_.values.size(), -1);
    info_.resize(n_);
    size_t segment = 0;
    for (size_t i = 0; i < n_; ++i) {
      const Node& node = block_.nodes[i];
      NodeInfo& info = info_[i];
      info.cls = classify(g_, node);
      if (info.cls.barrier) ++segment;
      info.segment = segment;
      if (info.cls.barrier) ++segment;
      for (const Arg& a : node.args)
        info.producers.push_back(a.is_value() ? producer_[static_cast<size_t>(a.value)] : -1);
      if (!node.outputs.empty() && g_.type(node.output()).is_tensor()) info.out_shape = g_.type(node.output()).shape;
      if (info.cls.cls == NodeClass::Reduction) {
        info.in_shape = g_.type(node.args[0].value).shape;
        info.dims = reduced_dims_of(g_, node);
      }
      for (ValueId o : node.outputs) producer_[static_cast<size_t>(o)] = static_cast<int>(i);
    }
    // A group outputs the values that nodes outside it read (users_, nested blocks included) and
    // those the block or the graph hands on.
    live_out_.assign(g_.values.size(), false);
    for (ValueId v : block_.results) live_out_[static_cast<size_t>(v)] = true;
    for (ValueId v : g_.outputs) live_out_[static_cast<size_t>(v)] = true;
    users_.assign(g_.values.size(), {});
    for (size_t i = 0; i < n_; ++i) {
      const Node& node = block_.nodes[i];
      auto note_use = [&](const Arg& a) {
        if (a.is_value()) users_[static_cast<size_t>(a.value)].push_back(i);
      };
      for (const Arg& a : node.args) note_use(a);
      for (const Block& b : node.blocks)
        for_each_node(b, [&](const Node& inner) {
          for (const Arg& a : inner.args) note_use(a);
        });
      for (const Block& b : node.blocks)
        for (ValueId r : b.results) users_[static_cast<size_t>(r)].push_back(i);
    }
    group_of_.assign(n_, -1);
  }

  bool fusible(size_t i) const {
    return info_[i].cls.cls == NodeClass::Elementwise || info_[i].cls.cls == NodeClass::Reduction;
  }

  // Where a member's value is computed: at every element of the iteration shape (Full), once per
  // reduced row (Outer), or at every element although its own shape is smaller and broadcasts
  // into the iteration shape (Broadcast: a cast of a smaller input, such as the float32 copy of a
  // float16 bias that decompose makes; recomputing it is cheaper than a kernel of its own). Other
  // ops at a smaller shape split, so nothing costly is recomputed.
  enum class Level { Full, Outer, Broadcast };

  // Whether `shape` broadcasts into `into` (right-aligned, each dim equal or 1).
  bool broadcasts_into(const SymShape& shape, const SymShape& into) const {
    if (shape.size() > into.size()) return false;
    size_t lead = into.size() - shape.size();
    for (size_t d = 0; d < shape.size(); ++d)
      if (g_.dims.equal(shape[d], into[lead + d]) != Truth::Always && g_.dims.equal(shape[d], 1) != Truth::Always)
        return false;
    return true;
  }

  bool used_only_by(size_t node, const std::vector<bool>& is_member) const {
    for (ValueId v : block_.nodes[node].outputs) {
      if (live_out_[static_cast<size_t>(v)]) return false;
      for (size_t u : users_[static_cast<size_t>(v)])
        if (!is_member[u]) return false;
    }
    return true;
  }

  // The kind of group the members (program order) form, or nullopt when they cannot: a group needs
  // one iteration space, and every value crossing between members must be available where its
  // consumer is evaluated.
  std::optional<FusionGroup::Kind> kind_of(const std::vector<size_t>& members) const {
    std::optional<size_t> first_reduction;
    for (size_t m : members)
      if (info_[m].cls.cls == NodeClass::Reduction) {
        first_reduction = m;
        break;
      }
    // Pointwise groups iterate over the shape of their last member, which nothing in the group
    // reads; reduction groups over the reduced input's shape.
    const SymShape& full = first_reduction ? info_[*first_reduction].in_shape : info_[members.back()].out_shape;
    std::vector<int> dims = first_reduction ? info_[*first_reduction].dims : std::vector<int>{};
    SymShape keep_shape, kept_shape;
    for (size_t d = 0; d < full.size(); ++d) {
      bool reduced = std::find(dims.begin(), dims.end(), static_cast<int>(d)) != dims.end();
      keep_shape.push_back(reduced ? DimExpr(1) : full[d]);
      if (!reduced) kept_shape.push_back(full[d]);
    }
    // Reduced dims that lead let a result without keepdim broadcast back along them.
    bool dims_lead = true;
    for (size_t k = 0; k < dims.size(); ++k) dims_lead = dims_lead && dims[k] == static_cast<int>(k);

    std::vector<bool> is_member(n_, false);
    std::vector<Level> level(n_, Level::Full);
    for (size_t m : members) is_member[m] = true;
    for (size_t m : members) {
      const NodeInfo& info = info_[m];
      bool reduction = info.cls.cls == NodeClass::Reduction;
      if (reduction) {
        if (info.dims != dims || !shapes_equal(g_.dims, info.in_shape, full)) return std::nullopt;
        level[m] = Level::Outer;
      } else if (shapes_equal(g_.dims, info.out_shape, full)) {
        level[m] = Level::Full;
      } else if (first_reduction && (shapes_equal(g_.dims, info.out_shape, keep_shape) ||
                                     shapes_equal(g_.dims, info.out_shape, kept_shape))) {
        level[m] = Level::Outer;
      } else if (block_.nodes[m].op == OpId::To && broadcasts_into(info.out_shape, full) && used_only_by(m, is_member)) {
        level[m] = Level::Broadcast;
      } else {
        return std::nullopt;
      }
      for (int p : info.producers) {
        if (p < 0 || !is_member[static_cast<size_t>(p)]) continue;
        size_t pi = static_cast<size_t>(p);
        // A reduction reads full-shape values; per-row consumers read per-row values; broadcast
        // prologues read only each other.
        if (reduction && level[pi] != Level::Full) return std::nullopt;
        if (!reduction && level[m] == Level::Outer && level[pi] != Level::Outer) return std::nullopt;
        if (level[m] == Level::Broadcast && level[pi] != Level::Broadcast) return std::nullopt;
        if (level[pi] != Level::Outer || reduction) continue;
        // A per-row value read by a consumer of another rank broadcasts along the reduced dims
        // only when those lead (right-aligned broadcasting).
        size_t consumer_rank = level[m] == Level::Full ? full.size() : info.out_shape.size();
        if (info_[pi].out_shape.size() != consumer_rank && !dims_lead) return std::nullopt;
      }
    }
    return first_reduction ? FusionGroup::Kind::Reduction : FusionGroup::Kind::Pointwise;
  }

  // Producers of the members' operands that lie outside the members.
  std::vector<size_t> outside_producers(const std::vector<size_t>& members, const std::vector<bool>& in_set) const {
    std::vector<size_t> out;
    for (size_t m : members)
      for (int p : info_[m].producers)
        if (p >= 0 && !in_set[static_cast<size_t>(p)]) out.push_back(static_cast<size_t>(p));
    return out;
  }

  // True when some value the members read from outside is computed, through the steps as they
  // would be scheduled (groups run as one unit), from one of the members: fusing would be a cycle.
  bool creates_cycle(const std::vector<size_t>& members) const {
    std::vector<bool> in_set(n_, false), seen(n_, false);
    for (size_t m : members) in_set[m] = true;
    std::vector<size_t> stack = outside_producers(members, in_set);
    while (!stack.empty()) {
      size_t p = stack.back();
      stack.pop_back();
      if (in_set[p]) return true;
      if (seen[p]) continue;
      seen[p] = true;
      // A node in a group waits for every input of its group.
      std::vector<size_t> unit = group_of_[p] >= 0 ? groups_[static_cast<size_t>(group_of_[p])] : std::vector<size_t>{p};
      for (size_t u : unit) {
        seen[u] = true;
        for (int q : info_[u].producers)
          if (q >= 0) stack.push_back(static_cast<size_t>(q));
      }
    }
    return false;
  }

  bool valid(const std::vector<size_t>& members) const {
    if (members.size() > options_.max_group_nodes) return false;
    for (size_t m : members)
      if (info_[m].segment != info_[members[0]].segment) return false;
    return kind_of(members).has_value() && !creates_cycle(members);
  }

  // Members of the given groups plus `node`, in program order.
  std::vector<size_t> merged(const std::vector<int>& group_ids, size_t node) const {
    std::vector<size_t> members{node};
    for (int gid : group_ids) {
      const auto& g = groups_[static_cast<size_t>(gid)];
      members.insert(members.end(), g.begin(), g.end());
    }
    std::sort(members.begin(), members.end());
    return members;
  }

  void commit(const std::vector<int>& group_ids, size_t node) {
    std::vector<size_t> members = merged(group_ids, node);
    int target = group_ids.empty() ? static_cast<int>(groups_.size()) : group_ids[0];
    if (group_ids.empty()) groups_.emplace_back();
    for (size_t k = 1; k < group_ids.size(); ++k) groups_[static_cast<size_t>(group_ids[k])].clear();
    for (size_t m : members) group_of_[m] = target;
    groups_[static_cast<size_t>(target)] = std::move(members);
  }

  void form_groups() {
    for (size_t i = 0; i < n_; ++i) {
      if (!fusible(i)) continue;
      if (!options_.fuse) {
        commit({}, i);
        continue;
      }
      // Groups that compute this node's operands: fuse with all of them if possible, else one.
      std::vector<int> producers;
      for (int p : info_[i].producers)
        if (p >= 0 && group_of_[static_cast<size_t>(p)] >= 0) {
          int gid = group_of_[static_cast<size_t>(p)];
          if (std::find(producers.begin(), producers.end(), gid) == producers.end()) producers.push_back(gid);
        }
      if (producers.size() > 1 && try_join(producers, i)) continue;
      bool joined = false;
      for (int gid : producers)
        if ((joined = try_join({gid}, i))) break;
      // Otherwise a group that reads one of the same inputs (one pass over shared data).
      for (int gid : joined ? std::vector<int>{} : sibling_groups(i))
        if ((joined = try_join({gid}, i))) break;
      if (!joined) commit({}, i);
    }
  }

  bool try_join(const std::vector<int>& group_ids, size_t node) {
    if (!valid(merged(group_ids, node))) return false;
    commit(group_ids, node);
    return true;
  }

  std::vector<int> sibling_groups(size_t i) const {
    std::vector<int> out;
    for (const Arg& a : block_.nodes[i].args) {
      if (!a.is_value()) continue;
      for (size_t u : users_[static_cast<size_t>(a.value)]) {
        if (u >= i || group_of_[u] < 0) continue;
        if (std::find(out.begin(), out.end(), group_of_[u]) == out.end()) out.push_back(group_of_[u]);
      }
    }
    return out;
  }

  FusionGroup describe_group(const std::vector<size_t>& members) const {
    FusionGroup group;
    group.kind = *kind_of(members);
    group.nodes = members;
    std::vector<bool> in_set(n_, false);
    for (size_t m : members) in_set[m] = true;
    std::set<ValueId> seen;
    for (size_t m : members) {
      const Node& node = block_.nodes[m];
      for (size_t k = 0; k < node.args.size(); ++k) {
        const Arg& a = node.args[k];
        if (!a.is_value()) continue;
        int p = info_[m].producers[k];
        if (p >= 0 && in_set[static_cast<size_t>(p)]) continue;
        if (seen.insert(a.value).second) group.inputs.push_back(a.value);
      }
    }
    for (size_t m : members) {
      for (ValueId v : block_.nodes[m].outputs) {
        bool used_outside = live_out_[static_cast<size_t>(v)];
        for (size_t u : users_[static_cast<size_t>(v)]) used_outside = used_outside || !in_set[u];
        if (used_outside) group.outputs.push_back(v);
      }
    }
    return group;
  }

  // Topological order of the steps within each stretch between barriers, program order first.
  std::vector<Step> order_steps(const PartitionPlan& plan) const {
    std::vector<Step> steps;
    auto step_of = [&](size_t i) {
      const NodeInfo& info = info_[i];
      switch (info.cls.cls) {
        case NodeClass::Extern: return Step{Step::Kind::Extern, i, ""};
        case NodeClass::Library: return Step{Step::Kind::Library, i, info.cls.reason};
        case NodeClass::Eager: return Step{Step::Kind::Eager, i, info.cls.reason};
        default: return Step{Step::Kind::Kernel, static_cast<size_t>(group_of_[i]), ""};
      }
    };
    // A unit is a group (its first member stands for it) or a single node.
    auto unit_of = [&](size_t i) -> size_t {
      return group_of_[i] >= 0 ? plan.groups[static_cast<size_t>(group_of_[i])].nodes.front() : i;
    };
    size_t begin = 0;
    while (begin < n_) {
      size_t end = begin;
      while (end < n_ && info_[end].segment == info_[begin].segment) ++end;
      std::map<size_t, std::set<size_t>> successors;
      std::map<size_t, size_t> pending;
      for (size_t i = begin; i < end; ++i) pending.emplace(unit_of(i), 0);
      for (size_t i = begin; i < end; ++i) {
        for (int p : info_[i].producers) {
          if (p < 0 || static_cast<size_t>(p) < begin) continue;
          size_t from = unit_of(static_cast<size_t>(p)), to = unit_of(i);
          if (from != to && successors[from].insert(to).second) ++pending[to];
        }
      }
      std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
      for (const auto& [unit, count] : pending)
        if (count == 0) ready.push(unit);
      size_t emitted = 0;
      while (!ready.empty()) {
        size_t unit = ready.top();
        ready.pop();
        steps.push_back(step_of(unit));
        ++emitted;
        for (size_t next : successors[unit])
          if (--pending[next] == 0) ready.push(next);
      }
      GBC_INTERNAL_ASSERT(emitted == pending.size(), "partition: the fusion groups form a cycle");
      begin = end;
    }
    return steps;
  }

  const Graph& g_;
  const Block& block_;
  const PartitionOptions& options_;
  size_t n_;
  std::vector<NodeInfo> info_;
  std::vector<int> producer_;
  std::vector<bool> live_out_;
  std::vector<std::vector<size_t>> users_;
  std::vector<int> group_of_;
  std::vector<std::vector<size_t>> groups_;  // emptied when merged into another
};

}  // namespace

std::vector<int> reduced_dims_of(const Graph& graph, const Node& node) {
  int64_t rank = static_cast<int64_t>(graph.type(node.args.at(0).value).rank());
  std::vector<int> dims;
  if (rank == 0) return dims;
  std::optional<std::vector<int64_t>> listed;
  if (node.op == OpId::Argmax) {
    if (node.has_attr("dim")) listed = std::vector<int64_t>{node.attr_int("dim", 0)};
  } else {
    listed = node.attr_int_list("dim");
  }
  if (!listed || listed->empty()) {
    dims.resize(static_cast<size_t>(rank));
    std::iota(dims.begin(), dims.end(), 0);
    return dims;
  }
  for (int64_t d : *listed) {
    auto nd = normalize_dim(d, rank);
    GBC_INTERNAL_ASSERT(nd.has_value(), "partition: reduction dim out of range in a typed graph");
    dims.push_back(static_cast<int>(*nd));
  }
  std::sort(dims.begin(), dims.end());
  return dims;
}

PartitionPlan partition_block(const Graph& graph, const Block& block, const PartitionOptions& options) {
  return Partitioner(graph, block, options).run();
}

std::string print_partition(const Graph& graph, const Block& block, const PartitionPlan& plan) {
  std::string out;
  auto names = [&](const std::vector<ValueId>& values) {
    std::string s;
    for (ValueId v : values) s += (s.empty() ? "" : ", ") + graph.name_of(v);
    return s.empty() ? std::string("-") : s;
  };
  for (const Step& step : plan.steps) {
    switch (step.kind) {
      case Step::Kind::Kernel: {
        const FusionGroup& g = plan.groups.at(step.index);
        std::string members;
        for (size_t m : g.nodes) {
          const Node& node = block.nodes[m];
          members += (members.empty() ? "" : ", ") + (node.outputs.empty() ? op_name(node.op) : graph.name_of(node.output()));
        }
        out += "kernel " + std::to_string(step.index) +
               (g.kind == FusionGroup::Kind::Pointwise ? " pointwise [" : " reduction [") + members +
               "]  in: " + names(g.inputs) + "  out: " + names(g.outputs) + "\n";
        break;
      }
      case Step::Kind::Extern: out += "extern " + print_node(graph, block.nodes.at(step.index)) + "\n"; break;
      case Step::Kind::Library:
        out += "library " + print_node(graph, block.nodes.at(step.index)) + "  # " + step.reason + "\n";
        break;
      case Step::Kind::Eager:
        out += "eager " + print_node(graph, block.nodes.at(step.index)) + "  # " + step.reason + "\n";
        break;
    }
  }
  return out;
}

}  // namespace gbc
