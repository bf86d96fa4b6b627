// Builders for the ops a compiler calls out to (matmul, linear, bmm, addmm, baddbmm, conv2d: weights
// with matching inner dims and kernels that fit; the pools: windows that fit; embedding: indices
// within its table), dropout, and the custom kernels.
#include <algorithm>

#include "compiler/ir/custom_ops.h"
#include "harness/fuzz/op_builders.h"

namespace gbc {
namespace {

ValueDist weights() {
  ValueDist d;
  d.kind = ValueDist::Kind::Uniform;
  d.a = -0.5;
  d.b = 0.5;
  d.explicit_in_model = true;
  return d;
}

// A weight-like operand: a param most of the time, an input otherwise.
ValueId weight_tensor(GraphBuilder& b, DType dtype, const SymShape& shape) {
  return b.new_input(dtype, shape, weights(), b.chance(0.7));
}

// A small constant or an input dim, for output features and inner sizes.
DimExpr feature_dim(GraphBuilder& b) {
  return b.chance(0.7) ? DimExpr(b.uniform_int(1, std::min<int64_t>(6, b.config().max_dim_size))) : b.random_dim();
}

bool build_matmul(GraphBuilder& b, Need need) {
  need.shape_ok = [&b](const SymShape& s) { return !s.empty() && b.fits_input(s.back()); };
  need.make_shape = [&b] { return b.random_shape(b.random_rank(1)); };
  auto a = b.obtain(need);
  if (!a) return false;
  const ValueType ta = b.type(*a);
  const DimExpr k = ta.shape.back();
  SymShape sb;
  int rank_b = b.random_rank(1);
  if (rank_b == 1) {
    sb = {k};
  } else {
    // Batch dims that broadcast with a's (torch.matmul broadcasts them).
    SymShape a_batch(ta.shape.begin(), ta.shape.end() - std::min<long>(static_cast<long>(ta.rank()), 2));
    SymShape batch = b.partner_shape(a_batch, true);
    while (static_cast<int>(batch.size()) > rank_b - 2) batch.erase(batch.begin());
    sb = batch;
    sb.push_back(k);
    sb.push_back(feature_dim(b));
  }
  Node n;
  n.op = OpId::Matmul;
  n.args = {Arg::of(*a), Arg::of(weight_tensor(b, ta.dtype, sb))};
  return b.add_node(std::move(n)).has_value();
}

bool build_linear(GraphBuilder& b, Need need) {
  if (b.config().max_rank < 2) return false;  // the weight is [out_features, in_features]
  need.shape_ok = [&b](const SymShape& s) { return !s.empty() && b.fits_input(s.back()); };
  need.make_shape = [&b] { return b.random_shape(b.random_rank(1)); };
  auto x = b.obtain(need);
  if (!x) return false;
  const ValueType t = b.type(*x);
  DimExpr out = feature_dim(b);
  Node n;
  n.op = OpId::Linear;
  n.args = {Arg::of(*x), Arg::of(weight_tensor(b, t.dtype, {out, t.shape.back()}))};
  if (b.chance(0.6)) n.args.push_back(Arg::of(weight_tensor(b, t.dtype, {out})));
  return b.add_node(std::move(n)).has_value();
}

bool build_bmm(GraphBuilder& b, Need need) {
  if (b.config().max_rank < 3) return false;
  need.shape_ok = [&b](const SymShape& s) { return s.size() == 3 && b.fits_input(s[0]) && b.fits_input(s[2]); };
  need.make_shape = [&b] { return b.random_shape(3); };
  auto a = b.obtain(need);
  if (!a) return false;
  const ValueType t = b.type(*a);
  Node n;
  n.op = OpId::Bmm;
  n.args = {Arg::of(*a), Arg::of(weight_tensor(b, t.dtype, {t.shape[0], t.shape[2], feature_dim(b)}))};
  return b.add_node(std::move(n)).has_value();
}

// addmm and baddbmm: the product of the obtained matrix (batch) and a weight, plus a bias that
// broadcasts to it (a row, or the whole shape), with beta and alpha now and then.
bool build_add_matmul(GraphBuilder& b, Need need, OpId op) {
  const size_t rank = op == OpId::Addmm ? 2 : 3;
  if (b.config().max_rank < static_cast<int>(rank)) return false;
  need.shape_ok = [&b, rank](const SymShape& s) {  // the weight and bias take its dims
    return s.size() == rank && std::all_of(s.begin(), s.end(), [&b](const DimExpr& d) { return b.fits_input(d); });
  };
  need.make_shape = [&b, rank] { return b.random_shape(static_cast<int>(rank)); };
  auto a = b.obtain(need);
  if (!a) return false;
  const ValueType t = b.type(*a);
  SymShape product(t.shape.begin(), t.shape.end() - 1), weight(t.shape.begin(), t.shape.end() - 2);
  const DimExpr out = feature_dim(b);
  product.push_back(out);
  weight.push_back(t.shape.back());
  weight.push_back(out);
  const SymShape bias = b.chance(0.5) ? SymShape{out} : product;
  Node n;
  n.op = op;
  n.args = {Arg::of(weight_tensor(b, t.dtype, bias)), Arg::of(*a), Arg::of(weight_tensor(b, t.dtype, weight))};
  if (b.chance(0.3)) n.attrs["beta"] = Scalar::from_float(0.5);
  if (b.chance(0.3)) n.attrs["alpha"] = Scalar::from_int(2);
  return b.add_node(std::move(n)).has_value();
}

// Rows of a [rows, dim] table picked by integer indices drawn within it.
bool build_embedding(GraphBuilder& b, Need need) {
  auto index_dtype = b.random_dtype([&b](DType d) { return (d == DType::Int64 || d == DType::Int32) && b.configured(d); });
  auto dtype = b.random_dtype(need.dtype_ok);
  if (!index_dtype || !dtype || b.config().max_rank < 2) return false;
  const int64_t rows = b.uniform_int(1, std::min<int64_t>(8, b.config().max_dim_size));
  ValueDist within;
  within.kind = ValueDist::Kind::Int;
  within.a = 0;
  within.b = static_cast<double>(rows - 1);
  within.explicit_in_model = true;
  const ValueId indices = b.new_input(*index_dtype, b.random_shape(std::min(b.random_rank(0), b.config().max_rank - 1)), within, false);
  Node n;
  n.op = OpId::Embedding;
  n.args = {Arg::of(weight_tensor(b, *dtype, {rows, feature_dim(b)})), Arg::of(indices)};
  if (b.chance(0.3)) n.attrs["padding_idx"] = b.uniform_int(0, rows - 1);
  return b.add_node(std::move(n)).has_value();
}

bool build_conv2d(GraphBuilder& b, Need need) {
  if (b.config().max_rank < 4) return false;  // the weight is [out, in / groups, kH, kW]
  need.shape_ok = [&b](const SymShape& s) { return (s.size() == 3 || s.size() == 4) && b.fits_input(s[s.size() - 3]); };
  need.make_shape = [&b] { return b.random_shape(b.chance(0.7) ? 4 : 3); };
  auto x = b.obtain(need);
  if (!x) return false;
  const ValueType t = b.type(*x);
  const DimExpr c = t.shape[t.rank() - 3];
  // Grouped convolution needs a constant channel count to split.
  int64_t groups = 1;
  if (c.is_const() && c.value() > 1 && b.chance(0.3)) {
    std::vector<int64_t> divisors;
    for (int64_t g = 2; g <= c.value(); ++g)
      if (c.value() % g == 0) divisors.push_back(g);
    groups = b.pick_one(divisors);
  }
  std::vector<int64_t> stride = {b.chance(0.7) ? 1 : 2}, padding = {b.chance(0.6) ? 0 : 1},
                       dilation = {b.chance(0.85) ? 1 : 2};
  // Kernel sizes that fit the smallest padded input: min + 2p - d(k-1) - 1 >= 0.
  int64_t kernel[2];
  for (int i = 0; i < 2; ++i) {
    int64_t smallest = b.graph().dims.min_of(t.shape[t.rank() - 2 + static_cast<size_t>(i)]);
    int64_t largest_fit = (smallest + 2 * padding[0] - 1) / dilation[0] + 1;
    kernel[i] = b.uniform_int(1, std::max<int64_t>(1, std::min<int64_t>({3, largest_fit, b.config().max_dim_size})));
  }
  int64_t out_channels = groups * b.uniform_int(1, std::max<int64_t>(1, std::min<int64_t>(3, b.config().max_dim_size / groups)));
  SymShape w = {out_channels, groups == 1 ? c : DimExpr(c.value() / groups), kernel[0], kernel[1]};
  Node n;
  n.op = OpId::Conv2d;
  n.args = {Arg::of(*x), Arg::of(weight_tensor(b, t.dtype, w))};
  if (b.chance(0.5)) n.args.push_back(Arg::of(weight_tensor(b, t.dtype, {out_channels})));
  // Two-element forms now and then; the loader keeps either as a list.
  auto pair = [&](const std::vector<int64_t>& v) {
    return b.chance(0.3) ? std::vector<int64_t>{v[0], v[0]} : v;
  };
  if (stride[0] != 1 || b.chance(0.2)) n.attrs["stride"] = pair(stride);
  if (padding[0] != 0 || b.chance(0.2)) n.attrs["padding"] = pair(padding);
  if (dilation[0] != 1 || b.chance(0.2)) n.attrs["dilation"] = pair(dilation);
  if (groups != 1 || b.chance(0.2)) n.attrs["groups"] = groups;
  return b.add_node(std::move(n)).has_value();
}

// A window that fits the smallest input (padding at most half of it, as ATen requires), and
// now and then a stride, padding, dilation or ceil_mode; ceil_mode only on constant H and W,
// where the output size is decided.
bool build_pool2d(GraphBuilder& b, Need need, OpId op) {
  if (b.config().max_rank < 3) return false;
  need.make_shape = [&b] { return b.random_shape(b.config().max_rank >= 4 && b.chance(0.7) ? 4 : 3); };
  need.shape_ok = [](const SymShape& s) { return s.size() == 3 || s.size() == 4; };
  auto x = b.obtain(need);
  if (!x) return false;
  const ValueType t = b.type(*x);
  int64_t smallest = std::min(b.graph().dims.min_of(t.shape[t.rank() - 2]), b.graph().dims.min_of(t.shape[t.rank() - 1]));
  if (smallest < 1) return false;
  const int64_t dilation = op == OpId::MaxPool2d && smallest >= 3 && b.chance(0.2) ? 2 : 1;
  const int64_t kernel = b.uniform_int(1, std::max<int64_t>(1, std::min<int64_t>(3, (smallest - 1) / dilation + 1)));
  const int64_t padding = kernel >= 2 && b.chance(0.3) ? 1 : 0;
  Node n;
  n.op = op;
  n.args = {Arg::of(*x)};
  n.attrs["kernel_size"] = b.chance(0.3) ? std::vector<int64_t>{kernel, kernel} : std::vector<int64_t>{kernel};
  if (b.chance(0.5)) n.attrs["stride"] = std::vector<int64_t>{b.uniform_int(1, 2)};
  if (padding != 0 || b.chance(0.2)) n.attrs["padding"] = std::vector<int64_t>{padding};
  if (dilation != 1) n.attrs["dilation"] = std::vector<int64_t>{dilation};
  const bool fixed_hw = t.shape[t.rank() - 2].is_const() && t.shape[t.rank() - 1].is_const();
  if (fixed_hw && b.chance(0.3)) n.attrs["ceil_mode"] = true;
  if (op == OpId::AvgPool2d && b.chance(0.3)) n.attrs["count_include_pad"] = false;
  return b.add_node(std::move(n)).has_value();
}

// Output sizes up to a little past the input's: adaptive windows overlap or repeat elements then.
bool build_adaptive_pool2d(GraphBuilder& b, Need need) {
  if (b.config().max_rank < 3) return false;
  need.make_shape = [&b] { return b.random_shape(b.config().max_rank >= 4 && b.chance(0.7) ? 4 : 3); };
  need.shape_ok = [&b](const SymShape& s) {
    if (s.size() != 3 && s.size() != 4) return false;
    for (size_t k = s.size() - 3; k < s.size(); ++k)
      if (b.graph().dims.min_of(s[k]) < 1) return false;  // ATen: only the batch may be empty
    return true;
  };
  auto x = b.obtain(need);
  if (!x) return false;
  Node n;
  n.op = OpId::AdaptiveAvgPool2d;
  n.args = {Arg::of(*x)};
  const int64_t h = b.uniform_int(1, 4), w = b.uniform_int(1, 4);
  n.attrs["output_size"] = b.chance(0.3) ? std::vector<int64_t>{h} : std::vector<int64_t>{h, w};
  return b.add_node(std::move(n)).has_value();
}

}  // namespace

bool build_extern(GraphBuilder& b, OpId op) {
  Need need;
  // Weights are made with the input's dtype, which must be one inputs may have.
  need.dtype_ok = [&](DType d) { return is_floating(d) && b.kernel_exists(op, d) && b.configured(d); };
  if (op == OpId::Matmul) return build_matmul(b, need);
  if (op == OpId::Linear) return build_linear(b, need);
  if (op == OpId::Bmm) return build_bmm(b, need);
  if (op == OpId::MaxPool2d || op == OpId::AvgPool2d) return build_pool2d(b, need, op);
  if (op == OpId::Addmm || op == OpId::Baddbmm) return build_add_matmul(b, need, op);
  if (op == OpId::Embedding) return build_embedding(b, need);
  if (op == OpId::AdaptiveAvgPool2d) return build_adaptive_pool2d(b, need);
  return build_conv2d(b, need);
}

bool build_dropout(GraphBuilder& b) {
  Need need;
  need.allow_empty = true;
  need.dtype_ok = [&](DType d) { return is_floating(d) && b.kernel_exists(OpId::Dropout, d); };
  auto x = b.obtain(need);
  if (!x) return false;
  bool training = b.config().allow_random && b.chance(0.7);
  Node n;
  n.op = OpId::Dropout;
  n.args = {Arg::of(*x)};
  if (b.chance(0.7)) n.attrs["p"] = b.pick_one(std::vector<double>{0.0, 0.25, 0.5, 1.0});
  if (!training || b.chance(0.3)) n.attrs["training"] = training;
  auto out = b.add_node(std::move(n));
  if (out && !training) {
    // Dropout in eval mode returns its input itself.
    b.mark_aliased(*x);
    b.mark_aliased(*out);
  }
  return out.has_value();
}

bool build_custom(GraphBuilder& b) {
  const CustomKernelInfo& k = b.pick_one(custom_kernels());
  Need need;
  need.allow_empty = k.name != "row_l2_normalize";
  need.dtype_ok = [&](DType d) { return is_floating(d) && b.custom_kernel_exists(k.name, d); };
  if (k.name == "row_l2_normalize") need.shape_ok = [](const SymShape& s) { return !s.empty(); };
  auto x = b.obtain(need, 2);
  if (!x) return false;
  const ValueType t = b.type(*x);
  Node n;
  n.op = OpId::Custom;
  n.args = {Arg::of(*x)};
  n.attrs["name"] = k.name;
  if (k.result == CustomKernelInfo::Result::Broadcast) {
    // A bias of x's dtype that broadcasts into x, so that `meta: same_as_input` is true.
    Need bias;
    bias.allow_empty = true;
    bias.dtype_ok = [&](DType d) { return d == t.dtype; };
    SymShape s = t.shape;
    bias.shape_ok = [&b, s](const SymShape& o) { return broadcasts_into(b, s, o); };
    bias.make_shape = [&b, s] { return b.partner_shape(s, false); };
    auto v = b.obtain(bias);
    if (!v) return false;
    n.args.push_back(Arg::of(*v));
  }
  // Without meta compilers cannot type the result: a graph break.
  bool meta = !b.config().allow_breaks || b.chance(0.5);
  if (meta) n.attrs["meta"] = std::string("same_as_input");
  else if (b.chance(0.5)) n.attrs["meta"] = std::string("none");
  return b.add_node(std::move(n)).has_value();
}

}  // namespace gbc
