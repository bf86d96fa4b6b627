// What a node does besides computing its output, for the passes that move, merge or remove nodes:
// side effects, mutation of its arguments, and which values may share storage (alias analysis).
// Conservative by design: "may alias" and "may be mutated" err towards yes. Tests: tests/passes/.
#pragma once

#include <set>
#include <vector>

#include "compiler/ir/graph.h"

namespace gbc {

/// Nodes that must run even when their output is unused, and never merge with another:
/// print, in-place ops, batch_norm in training mode (running stats), dropout (it draws from the
/// global generator), custom kernels (opaque), generic `aten` ops that write an argument or draw
/// random numbers (generic_op_effects).
bool has_side_effect(const Node& node);

/// The values a node writes into: self of add_/mul_, running_mean and running_var of batch_norm
/// in training mode.
std::vector<ValueId> mutated_args(const Node& node);

/// The tensors a node's output may be a view of (ATen returns views or self for these): the args
/// of view ops, of `to` to the same dtype, of dropout and custom kernels; self of in-place ops;
/// both branch results of `if`. Empty for ops that always allocate their output.
std::vector<ValueId> alias_sources(const Graph& graph, const Node& node);

/// May-alias facts over a whole graph. A root is a value with storage of its own (a graph input,
/// or the output of an op that allocates); every value may share the storage of its roots.
class AliasAnalysis {
 public:
  explicit AliasAnalysis(const Graph& graph);

  const std::set<ValueId>& roots(ValueId v) const;
  bool may_alias(ValueId a, ValueId b) const;
  /// Whether v may share storage with a graph input or param (a write to it is seen by the caller).
  bool may_alias_graph_input(ValueId v) const;
  /// Whether a graph output may share v's storage (the caller holds it, and may write to it).
  bool may_alias_graph_output(ValueId v) const;
  /// Whether some node of the graph may write into v's storage.
  bool may_be_mutated(ValueId v) const;

 private:
  std::vector<std::set<ValueId>> roots_;
  std::set<ValueId> input_roots_;
  std::set<ValueId> output_roots_;
  std::set<ValueId> mutated_roots_;
};

/// The storage a graph hands back to its caller while a pass makes values stand for others
/// (constant folding's x * 1 -> x, CSE): what a graph output reads, statically or through a
/// substitution made so far. The caller holds its inputs and outputs and may write to them, so
/// such a pass must not make two of them one tensor.
class ReturnedStorage {
 public:
  explicit ReturnedStorage(const AliasAnalysis& aa) : aa_(aa) {}
  /// Whether a graph output may share v's storage.
  bool returned(ValueId v) const;
  /// `replaced` now stands for `by`: if a graph output read `replaced`, it reads `by`.
  void substitute(ValueId replaced, ValueId by);

 private:
  const AliasAnalysis& aa_;
  std::set<ValueId> substituted_roots_;
};

}  // namespace gbc
