// Builders for the ops compilers break graphs at: print, item (a one-element tensor, reduced
// first when needed), if (a data-dependent predicate; both branches turn one value into a result
// of the same dtype and shape) and nonzero (a data-dependent size).
#include <algorithm>

#include "harness/fuzz/op_builders.h"

namespace gbc {
namespace {

bool one_element(const GraphBuilder& b, ValueId v) { return b.always_equal(numel(b.type(v).shape), 1); }

// A one-element tensor reduced from an existing value: sum(x) or amax(x).
std::optional<ValueId> reduce_to_one(GraphBuilder& b, int reserve) {
  Need any;
  auto x = b.obtain(any, reserve + 1);
  if (!x) return std::nullopt;
  Node r;
  r.op = b.chance(0.6) ? OpId::Sum : OpId::Amax;
  r.args = {Arg::of(*x)};
  return b.add_node(std::move(r));
}

std::optional<ValueId> unary_step(GraphBuilder& b, ValueId c, DType d, const std::string& id) {
  static const std::vector<OpId> floats = {OpId::Neg,  OpId::Abs, OpId::Relu,  OpId::Exp,   OpId::Tanh, OpId::Sin,
                                           OpId::Cos,  OpId::Sigmoid, OpId::Sqrt, OpId::Log, OpId::Floor, OpId::Round,
                                           OpId::Sign, OpId::Reciprocal, OpId::Erf, OpId::Silu};
  static const std::vector<OpId> integers = {OpId::Neg,   OpId::Abs,  OpId::Relu, OpId::Sign,
                                             OpId::Floor, OpId::Ceil, OpId::Round};
  const OpId op = d == DType::Bool ? OpId::LogicalNot : b.pick_one(is_floating(d) ? floats : integers);
  if (!b.kernel_exists(op, d)) return std::nullopt;
  Node n;
  n.op = op;
  n.args = {Arg::of(c)};
  return b.add_node(std::move(n), id);
}

// One node of a branch: turns c into a value of the same dtype and shape.
std::optional<ValueId> branch_step(GraphBuilder& b, ValueId c, const std::string& id) {
  const ValueType t = b.type(c);
  bool is_bool = t.dtype == DType::Bool;
  double u = b.uniform();
  if (u < 0.4) return unary_step(b, c, t.dtype, id);
  Node n;
  n.op = is_bool ? b.pick_one(std::vector<OpId>{OpId::LogicalAnd, OpId::LogicalOr, OpId::Ne})
                 : b.pick_one(std::vector<OpId>{OpId::Add, OpId::Sub, OpId::Mul, OpId::Maximum, OpId::Minimum});
  if (u < 0.75) {
    n.args = {Arg::of(c), Arg::number(b.number(same_kind(t.dtype), is_floating(t.dtype) ? Domain::Any : Domain::Small))};
  } else {
    auto other = b.pick([&](ValueId v) { return b.type(v).dtype == t.dtype && broadcasts_into(b, t.shape, b.type(v).shape); });
    if (!other) return std::nullopt;
    n.args = {Arg::of(c), Arg::of(*other)};
  }
  return b.add_node(std::move(n), id);
}

// The branch's nodes, `count` of them, the last defining `result`.
void build_branch(GraphBuilder& b, ValueId base, int count, const std::string& result) {
  ValueId c = base;
  for (int i = 0; i < count; ++i) {
    bool last = i == count - 1;
    if (!last && b.chance(0.1)) {
      Node p;
      p.op = OpId::Print;
      p.args = {Arg::of(c)};
      p.attrs["message"] = std::string("in branch");
      b.add_effect(std::move(p));
      continue;
    }
    std::optional<ValueId> next;
    for (int attempt = 0; attempt < 4 && !next; ++attempt) next = branch_step(b, c, last ? result : "");
    if (!next && last) {
      // x * 1 (or x and true) keeps any value as it is, so it always fits.
      Node n;
      bool is_bool = b.type(c).dtype == DType::Bool;
      n.op = is_bool ? OpId::LogicalAnd : OpId::Mul;
      n.args = {Arg::of(c), Arg::number(is_bool ? Scalar::from_bool(true) : Scalar::from_int(1))};
      next = b.add_node(std::move(n), result);
      GBC_INTERNAL_ASSERT(next.has_value(), "the identity step of a branch was rejected");
    }
    if (next) c = *next;
  }
  const ValueType& base_type = b.type(base);
  const ValueType& out_type = b.type(c);
  GBC_INTERNAL_ASSERT(out_type.dtype == base_type.dtype && out_type.rank() == base_type.rank(),
                      "a branch changed the type " + base_type.str() + " to " + out_type.str());
}

}  // namespace

bool build_print(GraphBuilder& b) {
  Node n;
  n.op = OpId::Print;
  for (int64_t k = b.uniform_int(0, 2); k > 0; --k)
    if (auto v = b.pick(nullptr)) n.args.push_back(Arg::of(*v));
  if (b.chance(0.8))
    n.attrs["message"] = b.pick_one(std::vector<std::string>{"step", "activations:", "x, y", "loss = ", "say \"hi\"", ""});
  return b.add_effect(std::move(n));
}

bool build_item(GraphBuilder& b) {
  std::optional<ValueId> x;
  if (b.chance(0.7)) x = b.pick([&](ValueId v) { return one_element(b, v); });
  if (!x && b.nodes_left() >= 2 && b.chance(0.6)) x = reduce_to_one(b, 1);
  if (!x) {
    auto dtype = b.random_dtype();
    // A one-element shape of rank 0 to 2, within max_rank (a seed with max_rank 1 once drew [1, 1]).
    const SymShape shape = b.pick_one(std::vector<SymShape>{{}, {1}, {1, 1}});
    x = b.new_input(*dtype, static_cast<int>(shape.size()) <= b.config().max_rank ? shape : SymShape{}, Domain::Any, false);
  }
  Node n;
  n.op = OpId::Item;
  n.args = {Arg::of(*x)};
  return b.add_node(std::move(n)).has_value();
}

bool build_if(GraphBuilder& b) {
  // A branch that finds no other step ends in the identity x * 1 (x and true for bool).
  if (b.nodes_left() < 3 || !b.enabled(OpId::Mul) || !b.enabled(OpId::LogicalAnd)) return false;
  Arg predicate;
  double u = b.uniform();
  std::vector<ValueId> scalars = b.host_scalars();
  std::optional<ValueId> one;
  if (u < 0.15 && !scalars.empty()) {
    predicate = Arg::of(b.pick_one(scalars));
  } else if (u < 0.2) {
    predicate = Arg::number(Scalar::from_bool(b.chance(0.5)));
  } else if (u < 0.5 && (one = b.pick([&](ValueId v) { return one_element(b, v); }))) {
    predicate = Arg::of(*one);
  } else if (b.nodes_left() >= 5) {
    // if x.sum() > 0: the usual data-dependent branch.
    auto r = reduce_to_one(b, 4);
    if (!r) return false;
    Node cmp;
    cmp.op = b.pick_one(std::vector<OpId>{OpId::Gt, OpId::Lt, OpId::Ne});
    cmp.args = {Arg::of(*r), Arg::number(Scalar::from_int(0))};
    auto c = b.add_node(std::move(cmp));
    if (!c) return false;
    predicate = Arg::of(*c);
  } else {
    predicate = Arg::of(b.new_input(*b.random_dtype(), {}, Domain::Any, false));
  }
  if (b.nodes_left() < 3) return false;
  Need any;
  any.allow_empty = true;
  auto base = b.obtain(any, 3);
  if (!base) return false;
  int budget = b.nodes_left() - 1;  // the if node itself
  int then_count = static_cast<int>(b.uniform_int(1, std::min(3, budget - 1)));
  int else_count = static_cast<int>(b.uniform_int(1, std::min(3, budget - then_count)));
  std::string result = b.fresh_id();
  b.open_block();
  build_branch(b, *base, then_count, result);
  Block then_block = b.close_block();
  b.open_block();
  build_branch(b, *base, else_count, result);
  Block else_block = b.close_block();
  return b.add_if(predicate, result, std::move(then_block), std::move(else_block)).has_value();
}

bool build_nonzero(GraphBuilder& b) {
  int max_in_rank = std::min(3, b.config().max_rank);
  if (b.config().max_rank < 2) return false;  // the result is [count, rank]
  Need need;
  need.allow_empty = true;
  // The result can hold numel * rank elements.
  need.shape_ok = [&b](const SymShape& s) {
    return !s.empty() && s.size() <= 3 && b.max_numel(s) * static_cast<int64_t>(s.size()) <= b.config().max_numel;
  };
  need.make_shape = [&b, max_in_rank] { return b.random_shape(static_cast<int>(b.uniform_int(1, max_in_rank))); };
  auto x = b.obtain(need);
  if (!x) return false;
  Node n;
  n.op = OpId::Nonzero;
  n.args = {Arg::of(*x)};
  auto out = b.add_node(std::move(n));
  GBC_INTERNAL_ASSERT(out.has_value() || b.nodes_left() <= 0, "nonzero was rejected after declaring its dim");
  return out.has_value();
}

}  // namespace gbc
