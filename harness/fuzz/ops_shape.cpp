// Builders for the shape ops: views (reshape targets that multiply out, expand of size-1 dims,
// squeeze of dims known to be 1, non-empty slices, ...), cat along a dim, and full.
#include <algorithm>
#include <numeric>

#include "harness/fuzz/op_builders.h"

namespace gbc {
namespace {

int64_t dim_index(GraphBuilder& b, int64_t d, int64_t rank) { return b.chance(0.3) ? d - rank : d; }

template <typename T>
void shuffle(GraphBuilder& b, std::vector<T>& v) {
  for (size_t i = v.size(); i > 1; --i)
    std::swap(v[i - 1], v[static_cast<size_t>(b.uniform_int(0, static_cast<int64_t>(i) - 1))]);
}

// The factors a reshape target may regroup: primes of constant sizes and input dims. Other sizes
// (nonzero's count, a slice's length) are opaque: only the -1 entry can absorb them.
void factor(const GraphBuilder& b, const DimExpr& d, std::vector<DimExpr>& atoms, std::vector<DimExpr>& opaque) {
  if (d.is_const()) {
    int64_t v = d.value();
    for (int64_t p = 2; p * p <= v; ++p)
      for (; v % p == 0; v /= p) atoms.push_back(p);
    if (v > 1) atoms.push_back(v);
  } else if (b.expressible(d)) {
    atoms.push_back(d);
  } else if (d.op() == DimExpr::Op::Mul) {
    factor(b, d.lhs(), atoms, opaque);
    factor(b, d.rhs(), atoms, opaque);
  } else {
    opaque.push_back(d);
  }
}

std::optional<Node> reshape(GraphBuilder& b, const SymShape& s) {
  std::vector<DimExpr> atoms, opaque;
  for (const auto& d : s) factor(b, d, atoms, opaque);
  shuffle(b, atoms);
  bool rest = !opaque.empty() || b.chance(0.35);
  SymShape target;
  for (const auto& a : atoms) {
    if (rest && b.chance(0.3)) continue;  // into the -1 entry
    bool merge = a.is_const() && !target.empty() && target.back().is_const() && b.chance(0.5);
    if (merge) target.back() = target.back().value() * a.value();
    else target.push_back(a);
  }
  auto insert_at_random = [&](DimExpr d) {
    target.insert(target.begin() + b.uniform_int(0, static_cast<int64_t>(target.size())), d);
  };
  if (b.chance(0.2)) insert_at_random(1);
  if (rest) insert_at_random(-1);
  if (static_cast<int>(target.size()) > b.config().max_rank) return std::nullopt;
  Node n;
  n.op = OpId::Reshape;
  n.attrs["shape"] = target;
  return n;
}

std::optional<Node> expand(GraphBuilder& b, const SymShape& s) {
  auto rank = static_cast<int>(s.size());
  SymShape size;
  if (rank < b.config().max_rank && b.chance(0.3))
    for (int64_t i = b.uniform_int(1, b.config().max_rank - rank); i > 0; --i) size.push_back(b.random_dim());
  for (const auto& d : s) {
    bool one = b.always_equal(d, 1);
    if (one && b.chance(0.7)) size.push_back(b.random_dim());
    else if (!b.expressible(d) || b.chance(0.6)) size.push_back(-1);
    else size.push_back(d);
  }
  Node n;
  n.op = OpId::Expand;
  n.attrs["size"] = size;
  return n;
}

std::optional<Node> squeeze(GraphBuilder& b, const SymShape& s) {
  // A dim that is 1 only for some dim values would make the rank depend on the input.
  std::vector<int64_t> always_one, never_one;
  for (size_t i = 0; i < s.size(); ++i) {
    Truth t = b.graph().dims.equal(s[i], 1);
    if (t == Truth::Always) always_one.push_back(static_cast<int64_t>(i));
    if (t == Truth::Never) never_one.push_back(static_cast<int64_t>(i));
  }
  Node n;
  n.op = OpId::Squeeze;
  if (always_one.size() + never_one.size() == s.size() && b.chance(0.3)) return n;
  if (always_one.empty() && never_one.empty()) return std::nullopt;
  int64_t d = !always_one.empty() && (never_one.empty() || b.chance(0.8)) ? b.pick_one(always_one) : b.pick_one(never_one);
  n.attrs["dim"] = dim_index(b, d, static_cast<int64_t>(s.size()));
  return n;
}

std::optional<Node> slice(GraphBuilder& b, const SymShape& s) {
  if (s.empty()) return std::nullopt;
  auto rank = static_cast<int64_t>(s.size());
  // Bounds are clamped by ATen; keep only slices that are non-empty for every dim value.
  for (int attempt = 0; attempt < 6; ++attempt) {
    int64_t d = b.uniform_int(0, rank - 1);
    int64_t start = b.pick_one(std::vector<int64_t>{0, 0, 1, 2, -1, -2});
    std::optional<int64_t> end;
    if (b.chance(0.5)) end = b.pick_one(std::vector<int64_t>{1, 2, 3, -1, 100});
    int64_t step = b.pick_one(std::vector<int64_t>{1, 1, 2, 3});
    const DimExpr& size = s[static_cast<size_t>(d)];
    auto clamp_index = [&](int64_t v) { return v >= 0 ? min(DimExpr(v), size) : max(size + v, 0); };
    DimExpr len = max(ceildiv((end ? clamp_index(*end) : size) - clamp_index(start), step), 0);
    if (b.graph().dims.min_of(len) < 1) continue;
    Node n;
    n.op = OpId::Slice;
    n.attrs["dim"] = dim_index(b, d, rank);
    if (start != 0 || b.chance(0.3)) n.attrs["start"] = start;
    if (end) n.attrs["end"] = *end;
    if (step != 1 || b.chance(0.3)) n.attrs["step"] = step;
    return n;
  }
  return std::nullopt;
}

std::optional<Node> view(GraphBuilder& b, OpId op, const SymShape& s) {
  auto rank = static_cast<int64_t>(s.size());
  if (op == OpId::Reshape) return reshape(b, s);
  if (op == OpId::Expand) return expand(b, s);
  if (op == OpId::Squeeze) return squeeze(b, s);
  if (op == OpId::Slice) return slice(b, s);
  Node n;
  n.op = op;
  if (op == OpId::Permute) {
    std::vector<int64_t> dims(static_cast<size_t>(rank));
    std::iota(dims.begin(), dims.end(), int64_t{0});
    shuffle(b, dims);
    for (auto& d : dims) d = dim_index(b, d, rank);
    n.attrs["dims"] = dims;
  } else if (op == OpId::Transpose) {
    int64_t r = std::max<int64_t>(rank, 1);
    n.attrs["dim0"] = dim_index(b, b.uniform_int(0, r - 1), r);
    n.attrs["dim1"] = dim_index(b, b.uniform_int(0, r - 1), r);
  } else if (op == OpId::Unsqueeze) {
    if (rank >= b.config().max_rank) return std::nullopt;
    n.attrs["dim"] = dim_index(b, b.uniform_int(0, rank), rank + 1);
  } else if (op == OpId::Flatten && rank > 0) {
    int64_t start = b.uniform_int(0, rank - 1), end = b.uniform_int(start, rank - 1);
    if (start != 0 || b.chance(0.3)) n.attrs["start_dim"] = dim_index(b, start, rank);
    if (end != rank - 1 || b.chance(0.3)) n.attrs["end_dim"] = dim_index(b, end, rank);
  }
  return n;
}

}  // namespace

bool build_view(GraphBuilder& b, OpId op) {
  Need need;
  // Views of empty tensors are fine, except reshape's -1 (ambiguous for 0 elements).
  need.allow_empty = op != OpId::Reshape && op != OpId::Expand;
  if (op == OpId::Squeeze || op == OpId::Slice || op == OpId::Permute) need.shape_ok = [](const SymShape& s) { return !s.empty(); };
  auto x = b.obtain(need);
  if (!x) return false;
  auto n = view(b, op, b.type(*x).shape);
  if (!n) return false;
  n->args = {Arg::of(*x)};
  auto out = b.add_node(std::move(*n));
  if (!out) return false;
  // The result shares x's storage: neither may be written in place any more.
  b.mark_aliased(*x);
  b.mark_aliased(*out);
  return true;
}

bool build_cat(GraphBuilder& b) {
  Need need;
  need.allow_empty = true;
  need.shape_ok = [](const SymShape& s) { return !s.empty(); };
  auto x = b.obtain(need);
  if (!x) return false;
  const SymShape s = b.type(*x).shape;
  auto rank = static_cast<int64_t>(s.size());
  int64_t d = b.uniform_int(0, rank - 1);
  Node n;
  n.op = OpId::Cat;
  n.args = {Arg::of(*x)};
  for (int64_t k = b.uniform_int(0, 2); k > 0; --k) {
    auto fits = [&](ValueId v) {
      const SymShape& o = b.type(v).shape;
      if (o.size() != s.size()) return false;
      for (int64_t i = 0; i < rank; ++i)
        if (i != d && !b.always_equal(o[static_cast<size_t>(i)], s[static_cast<size_t>(i)])) return false;
      return true;
    };
    bool can_make = true;
    for (int64_t i = 0; i < rank; ++i) can_make = can_make && (i == d || b.fits_input(s[static_cast<size_t>(i)]));
    std::optional<ValueId> other;
    double u = b.uniform();
    if (u < 0.25) other = *x;
    else if (u < 0.55) other = b.pick(fits);
    if (!other && can_make) {
      SymShape o = s;
      o[static_cast<size_t>(d)] = b.random_dim();
      DType own = b.type(*x).dtype;
      auto dtype = b.configured(own) && b.chance(0.8) ? std::optional<DType>(own) : b.random_dtype();
      other = b.new_input(*dtype, o, Domain::Any, false);
    }
    n.args.push_back(Arg::of(other ? *other : *x));
  }
  if (d != 0 || b.chance(0.3)) n.attrs["dim"] = dim_index(b, d, rank);
  return b.add_node(std::move(n)).has_value();
}

bool build_full(GraphBuilder& b) {
  double u = b.uniform();
  ScalarKind kind = u < 0.5 ? ScalarKind::Float : u < 0.85 ? ScalarKind::Int : ScalarKind::Bool;
  Scalar value = b.number(kind, Domain::Any);
  Node n;
  n.op = OpId::Full;
  n.attrs["shape"] = b.random_shape();
  n.attrs["value"] = value;
  if (b.chance(0.6)) {
    // A float value needs a floating dtype; ATen refuses to convert 3 to bool.
    auto dtype = b.random_dtype([&](DType d) {
      if (kind == ScalarKind::Float) return is_floating(d);
      return kind == ScalarKind::Bool || d != DType::Bool;
    });
    if (dtype) n.attrs["dtype"] = *dtype;
  }
  return b.add_node(std::move(n)).has_value();
}

}  // namespace gbc
