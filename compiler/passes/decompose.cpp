#include "compiler/passes/decompose.h"

#include <cmath>
#include <limits>
#include <map>
#include <optional>

#include "compiler/ir/infer.h"
#include "compiler/passes/graph_rewrite.h"

namespace gbc {
namespace {

Arg num(double v) { return Arg::number(Scalar::from_float(v)); }
Arg num_int(int64_t v) { return Arg::number(Scalar::from_int(v)); }
Arg val(ValueId v) { return Arg::of(v); }

// The sizes a reduction node reduces over (every dim when `dim` is absent or empty).
std::vector<DimExpr> reduced_sizes(const SymShape& shape, const Node& node) {
  auto dims = node.attr_int_list("dim");
  if (!dims || dims->empty()) return shape;
  std::vector<DimExpr> out;
  for (int64_t d : *dims)
    if (auto nd = normalize_dim(d, static_cast<int64_t>(shape.size())); nd && !shape.empty())
      out.push_back(shape[static_cast<size_t>(*nd)]);
  return out;
}

// The element count of the reduced dims when it is the same for every binding.
std::optional<int64_t> constant_count(const std::vector<DimExpr>& sizes) {
  int64_t n = 1;
  for (const auto& d : sizes) {
    if (!d.is_const()) return std::nullopt;
    n *= d.value();
  }
  return n;
}

Attrs reduction_attrs(const Node& node, bool keepdim) {
  Attrs a;
  if (const AttrValue* dim = node.attr("dim")) a["dim"] = *dim;
  a["keepdim"] = keepdim;
  return a;
}

class Decomposer;

// Emits the replacement of one composite node. Intermediate values are named after the node's
// output ("y.max"); the last node writes the node's own output, so its uses stay as they are.
class Emitter {
 public:
  // in_f32: compute in float32 when the output is float16/bfloat16.
  Emitter(Decomposer& decomposer, Graph& graph, std::vector<Node>& out, const Node& node, bool in_f32)
      : decomposer_(decomposer), graph_(graph), out_(out), node_(node), target_(node.output()),
        target_dtype_(graph.type(target_).dtype), in_f32_(in_f32 && is_reduced_float(target_dtype_)) {}

  // An operand as the decomposition computes it: widened to float32 for float16/bfloat16.
  ValueId input(ValueId x) {
    if (!in_f32_ || !is_reduced_float(graph_.type(x).dtype)) return x;
    return emit(make_node(graph_, OpId::To, {val(x)}, {{"dtype", DType::Float32}}, node_.loc, graph_.name_of(x) + ".f32"));
  }
  ValueId arg(size_t i) { return input(node_.args[i].value); }

  ValueId op(OpId op, std::vector<Arg> args, Attrs attrs, const std::string& suffix) {
    std::string name = graph_.name_of(target_) + "." + suffix;
    return emit(make_node(graph_, op, std::move(args), std::move(attrs), node_.loc, name));
  }

  // The last step: writes the node's output (through a cast back when computing in float32).
  void result(OpId final_op, std::vector<Arg> args, Attrs attrs = {}) {
    if (in_f32_) {
      ValueId wide = op(final_op, std::move(args), std::move(attrs), "f32");
      emit(make_node_into(graph_, target_, OpId::To, {val(wide)}, {{"dtype", target_dtype_}}, node_.loc));
      return;
    }
    emit(make_node_into(graph_, target_, final_op, std::move(args), std::move(attrs), node_.loc));
  }

 private:
  ValueId emit(Node node);

  Decomposer& decomposer_;
  Graph& graph_;
  std::vector<Node>& out_;
  const Node& node_;
  ValueId target_;
  DType target_dtype_;
  bool in_f32_;
};

class Decomposer {
 public:
  explicit Decomposer(Graph& graph) : g_(graph) {}

  void rewrite(Block& block) {
    std::vector<Node> out;
    out.reserve(block.nodes.size());
    for (auto& n : block.nodes) {
      for (auto& b : n.blocks) rewrite(b);
      lower(std::move(n), out);
    }
    block.nodes = std::move(out);
  }

  // Appends the node, or its decomposition (decomposed again where it emits composites, as
  // layer_norm emits mean).
  void lower(Node node, std::vector<Node>& out) {
    if (!decomposable(node)) {
      out.push_back(std::move(node));
      return;
    }
    using Rule = void (Decomposer::*)(Emitter&, const Node&);
    static const std::map<OpId, Rule> rules = {
        {OpId::Softmax, &Decomposer::softmax},       {OpId::LogSoftmax, &Decomposer::log_softmax},
        {OpId::Logsumexp, &Decomposer::logsumexp},   {OpId::LayerNorm, &Decomposer::layer_norm},
        {OpId::Var, &Decomposer::var},               {OpId::Mean, &Decomposer::mean},
        {OpId::Gelu, &Decomposer::gelu},             {OpId::Silu, &Decomposer::silu},
        {OpId::BatchNorm, &Decomposer::batch_norm}, {OpId::Linear, &Decomposer::linear},
    };
    // A float16/bfloat16 linear computes in float32 too: its product rounded to the half dtype and
    // then the bias added would round twice where ATen's addmm rounds once (found by the fuzzer:
    // a bfloat16 x * w + b that is 0 in one and not in the other).
    Emitter e(*this, g_, out, node, /*in_f32=*/true);
    (this->*rules.at(node.op))(e, node);
  }

 private:
  const SymShape& shape_of(const Node& node, size_t i) const { return g_.type(node.args[i].value).shape; }

  // v as float64 (itself when it is float64 already).
  ValueId to_f64(Emitter& e, ValueId v, const std::string& name) {
    return g_.type(v).dtype == DType::Float64 ? v : e.op(OpId::To, {val(v)}, {{"dtype", DType::Float64}}, name);
  }

  // A [C] per-channel param of batch_norm's input of shape xs as [C, 1, ...], which broadcasts
  // along dim 1 (as it is for a 2-d input).
  ValueId per_channel(Emitter& e, const SymShape& xs, ValueId p, const std::string& name) {
    if (xs.size() == 2) return p;
    SymShape shape(xs.size() - 1, DimExpr(1));
    shape[0] = xs[1];
    return e.op(OpId::Reshape, {val(p)}, {{"shape", shape}}, name);
  }

  bool decomposable(const Node& node) const {
    const OpId op = node.op;
    if (node.outputs.size() != 1 || !g_.type(node.output()).is_tensor()) return false;
    // The tanh gelu stays whole: the prelude's gbc_gelu_tanh computes it as x / (1 + e^(-2u)),
    // half the instructions of the tanh form this would spell out (kernel_prelude.h). silu stays
    // whole too: gbc_silu is ATen's x / (1 + e^-x), one rounding where x * sigmoid(x) has two
    // (an ulp apart from eager, which pow(e, silu(x)) made a fp64 failure: seed 8003142). But
    // not in float16: LibTorch 1.13 has no float16 silu on the CPU, and what the pipeline leaves
    // on ATen (the decomp tier, a fallback) must run there.
    if (op == OpId::Gelu) return node.attr_string("approximate", "none") != "tanh";
    if (op == OpId::Silu) return g_.type(node.args[0].value).dtype == DType::Float16;
    if (op == OpId::Linear) return node.args.size() == 3;
    if (op == OpId::BatchNorm) return !node.attr_bool("training", false) || training_batch_norm_decomposable(node);
    if (op == OpId::LayerNorm) return !node.attr_shape("normalized_shape")->empty();
    if (op == OpId::Mean || op == OpId::Var) return constant_count(reduced_sizes(shape_of(node, 0), node)).has_value();
    if (op == OpId::Softmax || op == OpId::LogSoftmax || op == OpId::Logsumexp) {
      // amax has no identity: a reduced dim that may be empty keeps the op whole.
      std::vector<DimExpr> sizes;
      const SymShape& s = shape_of(node, 0);
      if (op == OpId::Logsumexp) {
        sizes = reduced_sizes(s, node);
      } else if (!s.empty()) {
        int64_t dim = *normalize_dim(node.attr_int("dim", -1), static_cast<int64_t>(s.size()));
        sizes.push_back(s[static_cast<size_t>(dim)]);
      }
      for (const auto& d : sizes)
        if (g_.dims.min_of(d) == 0) return false;
      return true;
    }
    return false;
  }

  // exp(x - amax(x)) * (1 / sum(exp(x - amax(x)))), as ATen's CPU softmax kernel rounds it
  // (_vec_softmax_lastdim multiplies by the sum's reciprocal): one division per row, not one per
  // element, which was a fifth of a fused softmax kernel's time.
  void softmax(Emitter& e, const Node& n) {
    Attrs keep = {{"dim", n.attr_int("dim", -1)}, {"keepdim", true}};
    ValueId x = e.arg(0);
    ValueId m = e.op(OpId::Amax, {val(x)}, keep, "max");
    ValueId shifted = e.op(OpId::Sub, {val(x), val(m)}, {}, "shifted");
    ValueId ex = e.op(OpId::Exp, {val(shifted)}, {}, "exp");
    ValueId s = e.op(OpId::Sum, {val(ex)}, keep, "sum");
    ValueId r = e.op(OpId::Reciprocal, {val(s)}, {}, "inv_sum");
    e.result(OpId::Mul, {val(ex), val(r)});
  }

  // (x - amax) - log(sum(exp(x - amax))), as ATen's log_softmax kernel.
  void log_softmax(Emitter& e, const Node& n) {
    Attrs keep = {{"dim", n.attr_int("dim", -1)}, {"keepdim", true}};
    ValueId x = e.arg(0);
    ValueId m = e.op(OpId::Amax, {val(x)}, keep, "max");
    ValueId shifted = e.op(OpId::Sub, {val(x), val(m)}, {}, "shifted");
    ValueId ex = e.op(OpId::Exp, {val(shifted)}, {}, "exp");
    ValueId s = e.op(OpId::Sum, {val(ex)}, keep, "sum");
    ValueId l = e.op(OpId::Log, {val(s)}, {}, "logsum");
    e.result(OpId::Sub, {val(shifted), val(l)});
  }

  // ATen's logsumexp: m = amax with infinite maxima replaced by 0 (an all -inf row gives -inf,
  // a row with +inf gives +inf, NaN propagates), then log(sum(exp(x - m))) + m.
  void logsumexp(Emitter& e, const Node& n) {
    bool keepdim = n.attr_bool("keepdim", false);
    ValueId x = e.arg(0);
    auto safe_max = [&](bool keep, const std::string& name) {
      ValueId m = e.op(OpId::Amax, {val(x)}, reduction_attrs(n, keep), name);
      ValueId a = e.op(OpId::Abs, {val(m)}, {}, name + "_abs");
      ValueId inf = e.op(OpId::Eq, {val(a), num(std::numeric_limits<double>::infinity())}, {}, name + "_is_inf");
      return e.op(OpId::Where, {val(inf), num(0.0), val(m)}, {}, "safe_" + name);
    };
    ValueId m = safe_max(true, "max");
    ValueId shifted = e.op(OpId::Sub, {val(x), val(m)}, {}, "shifted");
    ValueId ex = e.op(OpId::Exp, {val(shifted)}, {}, "exp");
    ValueId s = e.op(OpId::Sum, {val(ex)}, reduction_attrs(n, keepdim), "sum");
    ValueId l = e.op(OpId::Log, {val(s)}, {}, "log");
    // Without keepdim the shift is added at the reduced shape: a second amax of the same input,
    // which fuses into the same reduction.
    ValueId shift = keepdim ? m : safe_max(false, "max_out");
    e.result(OpId::Add, {val(l), val(shift)});
  }

  // (x - mean) * rsqrt(mean((x - mean)^2) + eps) [* weight] [+ bias] over the trailing dims.
  void layer_norm(Emitter& e, const Node& n) {
    size_t k = n.attr_shape("normalized_shape")->size();
    std::vector<int64_t> dims;
    for (size_t i = k; i > 0; --i) dims.push_back(-static_cast<int64_t>(i));
    Attrs keep = {{"dim", dims}, {"keepdim", true}};
    ValueId x = e.arg(0);
    // A float32 mean is the float64 sum divided in float64, then rounded once: rounding the sum to
    // float32 first made the mean of a constant row (6 x 1.0105017) miss the value by an ulp, so
    // its normalized values were not the exact 0 (found by the fuzzer, seed 8001198).
    ValueId mu;
    if (g_.type(x).dtype == DType::Float32) {
      ValueId mean_f64 = e.op(OpId::Mean, {val(to_f64(e, x, "x_f64"))}, keep, "mean_f64");
      mu = e.op(OpId::To, {val(mean_f64)}, {{"dtype", DType::Float32}}, "mean");
    } else {
      mu = e.op(OpId::Mean, {val(x)}, keep, "mean");
    }
    ValueId centered = e.op(OpId::Sub, {val(x), val(mu)}, {}, "centered");
    // The squared deviations, the variance and rstd in float64: a float32 deviation above 1.8e19
    // squares to inf, which made rstd 0 and the whole row a silent 0 (ATen's moments give NaN).
    ValueId wide = to_f64(e, centered, "centered_f64");
    ValueId sq = e.op(OpId::Mul, {val(wide), val(wide)}, {}, "sq");
    ValueId var = e.op(OpId::Mean, {val(sq)}, keep, "var");
    ValueId ve = e.op(OpId::Add, {val(var), num(n.attr_float("eps", 1e-5))}, {}, "var_eps");
    const DType dtype = g_.type(centered).dtype;
    ValueId rstd = e.op(OpId::Rsqrt, {val(ve)}, {}, dtype == DType::Float64 ? "rstd" : "rstd_f64");
    if (dtype != DType::Float64) rstd = e.op(OpId::To, {val(rstd)}, {{"dtype", dtype}}, "rstd");
    if (n.args.size() == 1) return e.result(OpId::Mul, {val(centered), val(rstd)});
    ValueId norm = e.op(OpId::Mul, {val(centered), val(rstd)}, {}, "norm");
    if (n.args.size() == 2) return e.result(OpId::Mul, {val(norm), val(e.arg(1))});
    ValueId scaled = e.op(OpId::Mul, {val(norm), val(e.arg(1))}, {}, "scaled");
    e.result(OpId::Add, {val(scaled), val(e.arg(2))});
  }

  // sum((x - mean)^2) / (N - correction) in float64, as ATen's CPU var (Welford in double for
  // every float dtype), so values near the float32 maximum overflow neither the mean nor the
  // squares. The values are shifted by the row's first element first: float64 values near their
  // own maximum then give exactly 0 when equal (as Welford does), and the sums overflow only where
  // the variance itself does. ATen divides by max(N - correction, 0), so a non-positive divisor
  // gives inf (or nan for a zero sum). float16/bfloat16 round through float32 at the end, as
  // ATen's do.
  void var(Emitter& e, const Node& n) {
    const SymShape xs = shape_of(n, 0);  // a copy: emitting nodes adds values
    int64_t count = *constant_count(reduced_sizes(xs, n));
    int64_t divisor = std::max<int64_t>(count - n.attr_int("correction", 1), 0);
    auto f64 = [&](ValueId v, const std::string& name) { return to_f64(e, v, name); };
    ValueId first = n.args[0].value;
    const auto dims = n.attr_int_list("dim");
    for (int64_t d = 0; d < static_cast<int64_t>(xs.size()); ++d) {
      bool reduced = !dims || dims->empty();
      for (int64_t r : dims.value_or(std::vector<int64_t>{}))
        reduced = reduced || normalize_dim(r, static_cast<int64_t>(xs.size())) == d;
      if (reduced) first = e.op(OpId::Slice, {val(first)}, {{"dim", d}, {"start", int64_t{0}}, {"end", int64_t{1}}}, "first");
    }
    ValueId shifted = e.op(OpId::Sub, {val(f64(e.arg(0), "f64")), val(f64(first, "shift"))}, {}, "shifted");
    ValueId mu = e.op(OpId::Div, {val(e.op(OpId::Sum, {val(shifted)}, reduction_attrs(n, true), "mean_sum")), num_int(count)}, {}, "mean");
    ValueId centered = e.op(OpId::Sub, {val(shifted), val(mu)}, {}, "centered");
    ValueId sq = e.op(OpId::Mul, {val(centered), val(centered)}, {}, "sq");
    ValueId s = e.op(OpId::Sum, {val(sq)}, reduction_attrs(n, n.attr_bool("keepdim", false)), "sum");
    if (g_.type(n.args[0].value).dtype == DType::Float64) return e.result(OpId::Div, {val(s), num_int(divisor)});
    ValueId v = e.op(OpId::Div, {val(s), num_int(divisor)}, {}, "f64_var");
    e.result(OpId::To, {val(v)}, {{"dtype", DType::Float32}});
  }

  // ATen's CPU mean is sum(x) / N.
  void mean(Emitter& e, const Node& n) {
    int64_t count = *constant_count(reduced_sizes(shape_of(n, 0), n));
    ValueId s = e.op(OpId::Sum, {val(e.arg(0))}, reduction_attrs(n, n.attr_bool("keepdim", false)), "sum");
    e.result(OpId::Div, {val(s), num_int(count)});
  }

  // x * sigmoid(x), for float16 only (decomposable()).
  void silu(Emitter& e, const Node&) {
    ValueId x = e.arg(0);
    ValueId sig = e.op(OpId::Sigmoid, {val(x)}, {}, "sigmoid");
    e.result(OpId::Mul, {val(x), val(sig)});
  }

  // ATen's formula: x * 0.5 * (1 + erf(x * M_SQRT1_2)) (the tanh form is not decomposed).
  void gelu(Emitter& e, const Node&) {
    ValueId x = e.arg(0);
    ValueId scaled = e.op(OpId::Mul, {val(x), num(M_SQRT1_2)}, {}, "scaled");
    ValueId inner = e.op(OpId::Erf, {val(scaled)}, {}, "erf");
    ValueId one_plus = e.op(OpId::Add, {val(inner), num(1.0)}, {}, "one_plus");
    ValueId half = e.op(OpId::Mul, {val(x), num(0.5)}, {}, "half");
    e.result(OpId::Mul, {val(half), val(one_plus)});
  }

  // Eval mode: (x - running_mean) * rsqrt(running_var + eps) * weight + bias, the [C] params
  // reshaped to [C, 1, ...] so they broadcast along dim 1.
  // As ATen's CPU kernel computes it (batch_norm_cpu_collect_linear_and_constant_terms): per
  // channel scale = weight / sqrt(var + eps) and shift = bias - mean * scale, then x * scale + shift.
  // Two per-channel operands per element instead of four; the [C] work depends on params alone,
  // so the runtime computes it once (param_steps.h).
  void batch_norm(Emitter& e, const Node& n) {
    if (n.attr_bool("training", false)) return batch_norm_training(e, n);
    const SymShape xs = shape_of(n, 0);  // a copy: emitting nodes adds values
    ValueId x = e.arg(0), weight = e.arg(1), bias = e.arg(2), mean = e.arg(3), var = e.arg(4);
    ValueId ve = e.op(OpId::Add, {val(var), num(n.attr_float("eps", 1e-5))}, {}, "var_eps");
    ValueId rstd = e.op(OpId::Rsqrt, {val(ve)}, {}, "rstd");
    ValueId scale = e.op(OpId::Mul, {val(rstd), val(weight)}, {}, "scale");
    ValueId shift = e.op(OpId::Sub, {val(bias), val(e.op(OpId::Mul, {val(mean), val(scale)}, {}, "mean_scaled"))}, {}, "shift");
    ValueId scale_c = per_channel(e, xs, scale, "scale_c");
    ValueId shift_c = per_channel(e, xs, shift, "shift_c");
    ValueId scaled = e.op(OpId::Mul, {val(x), val(scale_c)}, {}, "scaled");
    e.result(OpId::Add, {val(scaled), val(shift_c)});
  }

  // Training mode needs the batch statistics' count, to unbias the variance: at least 2 for every
  // binding of the dims (ATen raises for 1 value per channel); a count of symbolic size is summed
  // at run time. Not for float64 inputs: their float64 sums overflow near the float64 maximum
  // where ATen's Welford mean does not, with nothing wider to compute in (float32 and narrower sum
  // in float64, which cannot overflow). Undecomposed, it ran on ATen, on whatever layout gbc gave
  // its input, and ATen's float32 batch_norm overflows on contiguous input where eager's strided
  // one did not (found by the fuzzer, seed 7401394).
  bool training_batch_norm_decomposable(const Node& node) const {
    const SymShape& xs = shape_of(node, 0);
    if (xs.size() < 2 || g_.type(node.args[0].value).dtype == DType::Float64) return false;
    int64_t least = 1;
    for (const DimExpr& d : batch_stat_sizes(xs)) least *= g_.dims.min_of(d);
    return least >= 2;
  }

  // The sizes a batch statistic reduces over: every dim of xs but the channels (dim 1).
  static std::vector<DimExpr> batch_stat_sizes(const SymShape& xs) {
    std::vector<DimExpr> reduced = {xs[0]};
    reduced.insert(reduced.end(), xs.begin() + 2, xs.end());
    return reduced;
  }

  // Training mode, as ATen's CPU kernel computes it (batch_norm_cpu_collect_stats, update_stats,
  // transform_input): per channel the float64 sum of x and mean = float32(sum / N), the sum of
  // the squares (x - mean)^2, invstd = float32(rsqrt(var_sum / N + eps)), then x * scale + shift
  // with scale = invstd * weight and shift = bias - mean * scale; the running stats
  // (1 - momentum) * running + momentum * batch (the variance unbiased: var_sum / (N - 1)),
  // written into the params by copy_, which the runtime runs after the graph's kernels
  // (kernel_plan.h). The squares, their sum and the running stats are float64 throughout: ATen's
  // contiguous kernel squares in float32 and keeps var_sum in float32, its strided one runs
  // Welford in float64, so near the float32 maximum the two overflow differently (docs/fuzzing.md);
  // float64 overflows in neither, as the float64 reference does not. Each sum runs in two
  // stages, over the trailing dims (rows of H * W contiguous values) and then over the batch: one
  // sum over dims (0, 2, 3) would read strided rows, gathered element by element.
  void batch_norm_training(Emitter& e, const Node& n) {
    const SymShape xs = shape_of(n, 0);  // a copy: emitting nodes adds values
    std::vector<int64_t> trailing;
    for (size_t d = 2; d < xs.size(); ++d) trailing.push_back(static_cast<int64_t>(d));
    const std::optional<int64_t> count = constant_count(batch_stat_sizes(xs));
    const double momentum = n.attr_float("momentum", 0.1);
    auto f64 = [&](ValueId v, const std::string& name) { return to_f64(e, v, name); };
    auto f32 = [&](ValueId v, const std::string& name) {
      return e.op(OpId::To, {val(v)}, {{"dtype", DType::Float32}}, name);
    };
    // Sum over every dim but 1, kept as [1, C, 1, ...].
    auto channel_sum = [&](ValueId v, const std::string& name) {
      ValueId rows = trailing.empty()
                         ? v
                         : e.op(OpId::Sum, {val(v)}, {{"dim", trailing}, {"keepdim", true}}, name + "_rows");
      return e.op(OpId::Sum, {val(rows)}, {{"dim", std::vector<int64_t>{0}}, {"keepdim", true}}, name);
    };
    ValueId x = e.arg(0), weight = e.arg(1), bias = e.arg(2);
    // The count per channel less `minus`: a number, or for dims of symbolic size the float64 sum
    // of ones over the same dims (float64(x == x) * 0 + 1 is 1 for NaN and Inf too).
    std::optional<ValueId> counted;
    if (!count) {
      ValueId same = e.op(OpId::Eq, {val(x), val(x)}, {}, "same");
      ValueId zeros = e.op(OpId::Mul, {val(f64(same, "same_f64")), num(0.0)}, {}, "zeros");
      counted = channel_sum(e.op(OpId::Add, {val(zeros), num(1.0)}, {}, "ones"), "count");
    }
    auto count_less = [&](int64_t minus, const std::string& name) -> Arg {
      if (count) return num_int(*count - minus);
      if (minus == 0) return val(*counted);
      return val(e.op(OpId::Sub, {val(*counted), num_int(minus)}, {}, name));
    };
    ValueId sum = channel_sum(f64(x, "x_f64"), "sum");
    ValueId mean = f32(e.op(OpId::Div, {val(sum), count_less(0, "")}, {}, "batch_mean_f64"), "batch_mean");
    // x itself, not x_f64: float32 minus a float64 tensor computes in float64 all the same, and a
    // value two reductions shared would be written out between them (8 bytes per element).
    ValueId centered = e.op(OpId::Sub, {val(x), val(f64(mean, "batch_mean_f64_rounded"))}, {}, "centered");
    ValueId sq = e.op(OpId::Mul, {val(centered), val(centered)}, {}, "sq");
    ValueId var_sum = channel_sum(sq, "var_sum");
    ValueId var = e.op(OpId::Div, {val(var_sum), count_less(0, "")}, {}, "batch_var");
    ValueId ve = e.op(OpId::Add, {val(var), num(n.attr_float("eps", 1e-5))}, {}, "var_eps");
    ValueId invstd = f32(e.op(OpId::Rsqrt, {val(ve)}, {}, "invstd_f64"), "invstd");
    ValueId scale = e.op(OpId::Mul, {val(invstd), val(per_channel(e, xs, weight, "weight_c"))}, {}, "scale");
    auto update = [&](size_t arg, ValueId batch, const std::string& name) {
      ValueId flat = e.op(OpId::Reshape, {val(batch)}, {{"shape", SymShape{xs[1]}}}, name + "_batch");
      ValueId kept = e.op(OpId::Mul, {val(f64(e.arg(arg), name + "_f64")), num(1.0 - momentum)}, {}, name + "_kept");
      ValueId added = e.op(OpId::Mul, {val(f64(flat, name + "_batch_f64")), num(momentum)}, {}, name + "_added");
      ValueId updated = e.op(OpId::Add, {val(kept), val(added)}, {}, name + "_updated");
      e.op(OpId::CopyInPlace, {n.args[arg], val(updated)}, {}, name + "_written");
    };
    update(3, mean, "running_mean");
    update(4, e.op(OpId::Div, {val(var_sum), count_less(1, "count_less_one")}, {}, "unbiased_var"), "running_var");
    // (x * scale - mean * scale) + bias, not ATen's x * scale + (bias - mean * scale): in a channel
    // of equal values the variance is 0 and scale is weight / sqrt(eps) (1000 for eps 1e-6); the
    // two products are then equal and cancel exactly, where bias - mean * scale kept ulp(1000) =
    // 6e-5 of rounding in place of the exact result, the bias (found by the fuzzer: batch_norm of
    // a constant input). x * scale keeps the output pass after the statistics: (x - mean) would
    // join the variance's kernel and be written out as a tensor.
    ValueId mean_scaled = e.op(OpId::Mul, {val(mean), val(scale)}, {}, "mean_scaled");
    ValueId scaled = e.op(OpId::Mul, {val(x), val(scale)}, {}, "scaled");
    ValueId centered_scaled = e.op(OpId::Sub, {val(scaled), val(mean_scaled)}, {}, "centered_scaled");
    e.result(OpId::Add, {val(centered_scaled), val(per_channel(e, xs, bias, "bias_c"))});
  }

  // linear(x, w) + bias: one ATen call (matmul with its own accumulation), then the bias add.
  void linear(Emitter& e, const Node& n) {
    ValueId product = e.op(OpId::Linear, {val(e.arg(0)), val(e.arg(1))}, {}, "linear");
    e.result(OpId::Add, {val(product), val(e.arg(2))});
  }

  Graph& g_;
};

ValueId Emitter::emit(Node node) {
  ValueId v = node.output();
  decomposer_.lower(std::move(node), out_);
  return v;
}

}  // namespace

Graph decompose(const Graph& graph) {
  Graph g = graph;
  Decomposer(g).rewrite(g.body);
  return g;
}

}  // namespace gbc
