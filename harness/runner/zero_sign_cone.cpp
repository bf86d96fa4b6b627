#include "harness/runner/zero_sign_cone.h"

#include "compiler/passes/effects.h"

namespace gbc {
namespace {

// Ops whose result IEEE 754 (or, for views, selects and comparisons, no arithmetic at all) fixes
// bit for bit given their operands.
bool exact_op(OpId op) {
  switch (op) {
    case OpId::Add: case OpId::Sub: case OpId::Mul: case OpId::Div: case OpId::Neg: case OpId::To:
    case OpId::Full: case OpId::Where: case OpId::Eq: case OpId::Ne: case OpId::Lt: case OpId::Le: case OpId::Gt:
    case OpId::Ge: case OpId::LogicalAnd: case OpId::LogicalOr: case OpId::LogicalNot:
    case OpId::Reshape: case OpId::Permute: case OpId::Transpose: case OpId::Expand: case OpId::Squeeze:
    case OpId::Unsqueeze: case OpId::Slice: case OpId::Flatten: case OpId::Cat:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::set<ValueId> values_with_pinned_zero_sign(const Graph& graph) {
  const AliasAnalysis alias(graph);
  std::set<ValueId> pinned;
  for (const GraphInput& in : graph.inputs)
    if (!alias.may_be_mutated(in.value)) pinned.insert(in.value);
  for_each_node(graph.body, [&](const Node& n) {
    if (!exact_op(n.op)) return;
    for (const Arg& a : n.args)
      if (a.is_value() && !pinned.count(a.value)) return;
    for (ValueId o : n.outputs)
      if (!alias.may_be_mutated(o)) pinned.insert(o);
  });
  return pinned;
}

}  // namespace gbc
