// Builder for writes through views (config.patterns.view_mutation): an in-place op (add_, mul_)
// on a view (a strided slice or a transpose) of a fresh tensor, whose own result nothing reads,
// and then a read of the base. Only the base shows the write, so a compiler whose dead-code
// elimination drops the in-place node (its result is unused) or whose functionalization forgets
// to write back into the base computes other values than eager. Valid by construction: the base
// is a non-empty, non-bool, unaliased tensor the graph computed (never an input), the number is
// of a kind that keeps its dtype, and the value ranges refuse writes that could overflow.
#include "harness/fuzz/op_builders.h"

#include "compiler/ir/op_schema.h"

namespace gbc {
namespace {

// A view that shares every element it shows with `base`: the last two dims swapped, or every
// second element of one dim (non-empty for every dim value, as the base is never empty).
Node view_of(GraphBuilder& b, ValueId base) {
  const auto rank = static_cast<int64_t>(b.type(base).rank());
  Node n;
  n.args = {Arg::of(base)};
  if (rank >= 2 && b.chance(0.5)) {
    n.op = OpId::Transpose;
    n.attrs["dim0"] = rank - 2;
    n.attrs["dim1"] = rank - 1;
  } else {
    n.op = OpId::Slice;
    n.attrs["dim"] = b.uniform_int(0, rank - 1);
    n.attrs["step"] = int64_t{2};
  }
  return n;
}

}  // namespace

bool build_view_mutation(GraphBuilder& b, OpId op) {
  if (op_schema(op).arg_kind != ArgKind::TensorOrNumber) return false;  // writes a number below (not copy_)
  std::vector<OpId> readers;
  for (OpId r : {OpId::Neg, OpId::Abs, OpId::Relu})
    if (b.enabled(r)) readers.push_back(r);
  if (b.nodes_left() < 3 || readers.empty() || !b.enabled(OpId::Slice)) return false;
  auto base = b.pick([&](ValueId v) {
    const ValueType& t = b.type(v);
    return b.facts(v).writable && t.is_tensor() && t.rank() >= 1 && t.dtype != DType::Bool &&
           !b.graph().is_graph_input(v) && b.min_numel(t.shape) > 0;
  });
  if (!base) return false;
  auto view = b.add_node(view_of(b, *base));
  if (!view) return false;
  b.mark_aliased(*base);
  b.mark_aliased(*view);
  Node write;
  write.op = op;
  write.args = {Arg::of(*view), Arg::number(b.number(same_kind(b.type(*base).dtype), Domain::Any))};
  auto written = b.add_in_place(std::move(write));
  if (!written) return false;
  b.written_through_view(*base, *written);
  Node read;
  read.op = b.pick_one(readers);
  if (!b.kernel_exists(read.op, b.type(*base).dtype)) read.op = OpId::Neg;
  read.args = {Arg::of(*base)};
  return b.add_node(std::move(read)).has_value();
}

}  // namespace gbc
