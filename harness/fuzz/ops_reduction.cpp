// Builders for the reductions (dims in range, as an int or a list, keepdim) and the
// normalizations (softmax over a dim, layer_norm over trailing dims, batch_norm over dim 1).
#include <algorithm>

#include "harness/fuzz/op_builders.h"

namespace gbc {
namespace {

// A dim index for a rank-r tensor, negative half the time (0-d tensors take 0 and -1).
int64_t random_dim_index(GraphBuilder& b, int64_t rank) {
  int64_t r = std::max<int64_t>(rank, 1);
  int64_t d = b.uniform_int(0, r - 1);
  return b.chance(0.4) ? d - r : d;
}

// A ValueDist for weights and statistics.
ValueDist uniform(double lo, double hi) {
  ValueDist d;
  d.kind = ValueDist::Kind::Uniform;
  d.a = lo;
  d.b = hi;
  d.explicit_in_model = true;
  return d;
}

// eps: the default (no attribute) or a different value.
void maybe_eps(GraphBuilder& b, Node& n) {
  if (b.chance(0.4)) n.attrs["eps"] = b.pick_one(std::vector<double>{1e-5, 1e-3, 1e-6});
}

}  // namespace

bool build_reduction(GraphBuilder& b, OpId op) {
  Need need;
  need.allow_empty = op == OpId::Sum || op == OpId::Prod;
  need.dtype_ok = [&](DType d) {
    if (op == OpId::Mean || op == OpId::Var || op == OpId::Logsumexp) return is_floating(d) && b.kernel_exists(op, d);
    if (op == OpId::Argmax) return d != DType::Bool;
    return b.kernel_exists(op, d);
  };
  auto x = b.obtain(need);
  if (!x) return false;
  auto rank = static_cast<int64_t>(b.type(*x).rank());
  Node n;
  n.op = op;
  n.args = {Arg::of(*x)};
  double u = b.uniform();
  if (op == OpId::Argmax) {
    if (u < 0.7) n.attrs["dim"] = random_dim_index(b, rank);
  } else if (u < 0.35 || rank == 0) {
    if (u < 0.2) n.attrs["dim"] = random_dim_index(b, rank);
  } else if (u < 0.65) {
    n.attrs["dim"] = random_dim_index(b, rank);
  } else {
    // A list of distinct dims, in any order and sign.
    std::vector<int64_t> all(static_cast<size_t>(rank));
    for (int64_t i = 0; i < rank; ++i) all[static_cast<size_t>(i)] = b.chance(0.3) ? i - rank : i;
    std::vector<int64_t> dims;
    for (int64_t d : all)
      if (b.chance(0.5)) dims.push_back(d);
    if (dims.empty()) dims.push_back(all.back());
    for (size_t i = dims.size(); i > 1; --i) std::swap(dims[i - 1], dims[static_cast<size_t>(b.uniform_int(0, static_cast<int64_t>(i) - 1))]);
    n.attrs["dim"] = dims;
  }
  if (b.chance(0.4)) n.attrs["keepdim"] = b.chance(0.6);
  if (op == OpId::Var && b.chance(0.5)) n.attrs["correction"] = b.uniform_int(0, 1);
  return b.add_node(std::move(n)).has_value();
}

bool build_normalization(GraphBuilder& b, OpId op) {
  Need need;
  // layer_norm and batch_norm make weights of the input's dtype, which must be one inputs may have.
  bool weights = op == OpId::LayerNorm || op == OpId::BatchNorm;
  need.dtype_ok = [&](DType d) { return is_floating(d) && b.kernel_exists(op, d) && (!weights || b.configured(d)); };
  Node n;
  n.op = op;
  if (op == OpId::Softmax || op == OpId::LogSoftmax) {
    need.allow_empty = true;
    auto x = b.obtain(need);
    if (!x) return false;
    n.args = {Arg::of(*x)};
    n.attrs["dim"] = random_dim_index(b, static_cast<int64_t>(b.type(*x).rank()));
    return b.add_node(std::move(n)).has_value();
  }
  if (op == OpId::LayerNorm) {
    need.shape_ok = [&b](const SymShape& s) { return !s.empty() && b.fits_input(s.back()); };
    need.make_shape = [&b] { return b.random_shape(b.random_rank(1)); };
    auto x = b.obtain(need);
    if (!x) return false;
    const ValueType t = b.type(*x);
    // normalized_shape: 1 to 3 trailing dims that an attribute can name.
    size_t k = 0;
    while (k < std::min<size_t>(t.rank(), 3) && b.fits_input(t.shape[t.rank() - 1 - k])) ++k;
    k = static_cast<size_t>(b.uniform_int(1, static_cast<int64_t>(k)));
    SymShape ns(t.shape.end() - static_cast<long>(k), t.shape.end());
    n.args = {Arg::of(*x)};
    n.attrs["normalized_shape"] = ns;
    double u = b.uniform();
    if (u < 0.7) n.args.push_back(Arg::of(b.new_input(t.dtype, ns, uniform(0.5, 1.5), true)));
    if (u < 0.45) n.args.push_back(Arg::of(b.new_input(t.dtype, ns, uniform(-0.5, 0.5), true)));
    maybe_eps(b, n);
    return b.add_node(std::move(n)).has_value();
  }
  // batch_norm(input, weight, bias, running_mean, running_var) over dim 1.
  need.shape_ok = [&b](const SymShape& s) { return s.size() >= 2 && s.size() <= 4 && b.fits_input(s[1]); };
  need.make_shape = [&b] { return b.random_shape(std::max(2, b.random_rank(2))); };
  if (b.config().max_rank < 2) return false;
  auto x = b.obtain(need);
  if (!x) return false;
  const ValueType t = b.type(*x);
  SymShape c = {t.shape[1]};
  n.args = {Arg::of(*x), Arg::of(b.new_input(t.dtype, c, uniform(0.5, 1.5), true)),
            Arg::of(b.new_input(t.dtype, c, uniform(-0.5, 0.5), true)),
            Arg::of(b.new_input(t.dtype, c, uniform(-0.5, 0.5), true)),
            Arg::of(b.new_input(t.dtype, c, uniform(0.5, 2.0), true))};
  if (b.chance(0.5)) n.attrs["training"] = b.chance(0.6);
  if (b.chance(0.3)) n.attrs["momentum"] = b.pick_one(std::vector<double>{0.1, 0.5, 0.0});
  maybe_eps(b, n);
  return b.add_node(std::move(n)).has_value();
}

}  // namespace gbc
