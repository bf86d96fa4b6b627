#include "compiler/passes/upcast_fp64.h"

#include <optional>
#include <string>

#include "compiler/ir/generic_op.h"
#include "compiler/ir/infer.h"
#include "compiler/ir/op_schema.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/effects.h"
#include "compiler/passes/graph_rewrite.h"

namespace gbc {
namespace {

class Upcaster {
 public:
  // graph: the copy it rewrites; original: the graph as loaded, which outlives it.
  Upcaster(Graph& graph, const Graph& original, const UpcastOptions& options)
      : g_(graph), original_(original), options_(options) {}

  void run() {
    for (const auto& in : g_.inputs) {
      ValueType& t = g_.value(in.value).type;
      if (t.is_tensor() && is_floating(t.dtype)) t.dtype = DType::Float64;
    }
    visit(g_.body);
  }

 private:
  // Program order, so each node is inferred from its (already upcast) operands.
  void visit(Block& block) {
    std::vector<Node> out;
    out.reserve(block.nodes.size());
    for (auto& n : block.nodes) {
      for (auto& b : n.blocks) visit(b);
      const std::optional<DType> half = half_target(n);
      retarget_dtype_attr(n);
      infer(n);
      if (!half) keep_cast_a_copy(n);
      if (produces_narrow_float(n)) {
        widen_integer_operands(n, out);
        infer(n);
      }
      if (n.op == OpId::LayerNorm) expand_layer_norm(n, out);
      if (n.op == OpId::Var) center_var_input(n, out);
      if (n.op == OpId::Log1p) guard_log1p(n, out);
      // A half cast's input moves before the cast rounds it (its midpoints are the threshold).
      if (options_.threshold_nudge != 0 && half) nudge_threshold_input(n, out);
      if (half) keep_half_rounding(n, *half, out);
      if (options_.threshold_nudge != 0 && !half) nudge_threshold_input(n, out);
      if (options_.threshold_nudge != 0 && near_tie_argmax(original_, n)) break_near_tie(n, out);
      if (const std::optional<DType> stored = half_result(n)) round_half_result(n, *stored, out);
      out.push_back(std::move(n));
    }
    block.nodes = std::move(out);
  }

  // A `to` that changed a float's dtype made a new tensor; between float64 values it would return
  // its input (ATen's `to` of the dtype a tensor has), and an in-place write through it would reach
  // the input in the reference alone. x * 1 is x, NaN, infinities and -0 included, in a new tensor.
  void keep_cast_a_copy(Node& n) {
    if (n.op != OpId::To || n.args.size() != 1 || !n.args[0].is_value()) return;
    const ValueId x = n.args[0].value;
    if (static_cast<size_t>(x) >= original_.values.size()) return;
    if (original_.type(x).dtype == original_.type(n.output()).dtype) return;  // eager's `to` returns x too
    if (g_.type(x).dtype != g_.type(n.output()).dtype) return;                // still a cast: a new tensor
    n.op = OpId::Mul;
    n.args = {Arg::of(x), Arg::number(Scalar::from_float(1.0))};
    n.attrs = {};
    infer(n);
  }

  // The float16/bfloat16 dtype a `to` or `full` rounds its values to, if any.
  std::optional<DType> half_target(const Node& n) const {
    if (n.op != OpId::To && n.op != OpId::Full) return std::nullopt;
    const auto dtype = n.attr_dtype("dtype");
    if (!dtype || (*dtype != DType::Float16 && *dtype != DType::BFloat16)) return std::nullopt;
    return dtype;
  }

  // A cast to float16 or bfloat16 (or a `full` of one) rounds: the program asks for it and eager
  // and the compiled path both do it, so the reference rounds too, then widens to float64.
  // Without it the reference measured both against values neither was asked for: logsumexp of five
  // bfloat16 -1.609375 is 6.3e-5, but -3.0e-8 from the unrounded float32 -1.6094379 (found by the
  // fuzzer, seed 6200789). n keeps its value id, now the widening cast.
  void keep_half_rounding(Node& n, DType half, std::vector<Node>& out) {
    Attrs attrs = n.attrs;
    attrs["dtype"] = half;
    Node rounded = make_node(g_, n.op, n.args, attrs, n.loc, g_.name_of(n.output()) + "." + std::string(dtype_name(half)));
    infer(rounded);
    n.op = OpId::To;
    n.args = {Arg::of(rounded.output())};
    n.attrs = {{"dtype", DType::Float64}};
    infer(n);
    out.push_back(std::move(rounded));
  }

  // The float16/bfloat16 dtype an op (not a cast or a full: keep_half_rounding) stores its new
  // tensor in, if any. Views, in-place ops and ops with effects keep their aliasing instead.
  std::optional<DType> half_result(const Node& n) const {
    if (n.op == OpId::To || n.op == OpId::Full || n.op == OpId::Dropout || n.outputs.size() != 1 || !n.blocks.empty())
      return std::nullopt;
    const ValueId o = n.output();
    if (static_cast<size_t>(o) >= original_.values.size() || !original_.type(o).is_tensor()) return std::nullopt;
    const DType dtype = original_.type(o).dtype;
    if (dtype != DType::Float16 && dtype != DType::BFloat16) return std::nullopt;
    if (g_.type(o).dtype != DType::Float64 || has_side_effect(n) || !mutated_args(n).empty()) return std::nullopt;
    const OpSchema* schema = find_op_schema(n.op);
    if (schema && schema->cls == OpClass::View) return std::nullopt;
    return dtype;
  }

  // Every ATen op writes its float16/bfloat16 result rounded to that dtype, and eager and gbc both
  // read it so (gbc's kernels round a fused member's half value as it is used: lower.cpp), so the
  // reference rounds it too: log_softmax of three bfloat16 zeros is -1.1015625, not -log(3), and a
  // logsumexp of it is -0.0029, not 0 (gbc's -0.0029 was blamed against eager's lucky 0, whose
  // own roundings cancelled: seed 8301040). n keeps its value id, now the rounded value widened.
  void round_half_result(Node& n, DType half, std::vector<Node>& out) {
    const std::string name = g_.name_of(n.output());
    Node exact = n;
    exact.outputs = {g_.add_value(g_.fresh_name(name + ".exact"), ValueType{}, n.loc)};
    infer(exact);
    Node rounded = make_node(g_, OpId::To, {Arg::of(exact.output())}, {{"dtype", half}}, n.loc,
                             name + "." + std::string(dtype_name(half)));
    n.op = OpId::To;
    n.args = {Arg::of(rounded.output())};
    n.attrs = {{"dtype", DType::Float64}};
    infer(n);
    out.push_back(std::move(exact));
    out.push_back(std::move(rounded));
  }

  // A threshold the program puts on a float value: a cast to an integer dtype (truncation) or of
  // a float32/float64 value to float16/bfloat16 (rounding at midpoints), floor, ceil, round and
  // sign, or a comparison of a tensor with a number. A value within
  // rounding of the threshold (or, for a float16/bfloat16 value, of a midpoint between two of its
  // values that rounds onto it) lands on either side in eager and in the compiled path. For the
  // results that rounding reaches (upcast_fp64.h), the thresholded value moves by its tolerance in
  // the direction of threshold_nudge (or by its slack input, where larger), and a float16/bfloat16
  // value is rounded to its dtype again, as the program stores it. An equality is put on its number
  // instead (below). A comparison of two computed tensors moves one side by both sides' relative
  // tolerance and keeps exact ties, so identities such as le(x, x) hold in every reference.
  void nudge_threshold_input(Node& n, std::vector<Node>& out) {
    // Judged on the loaded graph's types: the thresholded value as the program computes it.
    const std::optional<size_t> arg = thresholded_float_arg(original_, n);
    if (!arg) return;
    const ValueId input = n.args[*arg].value;
    const ValueType& was = original_.type(input);
    const bool f64 = was.dtype == DType::Float64;
    const double rtol = f64 ? options_.f64_rtol : options_.f32_rtol, atol = f64 ? options_.f64_atol : options_.f32_atol;
    const bool half = was.dtype == DType::Float16 || was.dtype == DType::BFloat16;
    const std::string name = g_.name_of(input) + (options_.threshold_nudge > 0 ? ".up" : ".down");
    auto add = [&](OpId op, std::vector<Arg> args, Attrs attrs, const std::string& suffix) {
      return emit(out, op, std::move(args), std::move(attrs), n.loc, name + suffix);
    };
    const Arg x = n.args[*arg];
    const std::optional<size_t> partner_arg = threshold_partner_arg(original_, n);
    Arg step;
    if (partner_arg) {
      // Two computed tensors: x moves by both sides' relative tolerance in their own dtypes (a
      // float16 mean against a bfloat16 product: seed 8103343), with no absolute tolerance (values
      // far below their tensors' magnitude keep their order) but eager's errors at both sides (the
      // slacks, below), and exact ties stay ties.
      auto relative = [&](const Arg& v, DType dtype, const std::string& suffix) {
        return add(OpId::Mul, {add(OpId::Abs, {v}, {}, suffix + "_abs"), Arg::number(Scalar::from_float(tolerance_of(dtype).first))},
                   {}, suffix + "_rel");
      };
      const Arg other = n.args[*partner_arg];
      step = add(OpId::Add, {relative(x, was.dtype, ""), relative(other, original_.type(other.value).dtype, "_other")}, {}, "_step");
    } else {
      // x + sign * (rtol * |x| + atol), a float16/bfloat16 value rounded to its dtype again.
      step = add(OpId::Add, {add(OpId::Mul, {add(OpId::Abs, {x}, {}, "_abs"), Arg::number(Scalar::from_float(rtol))}, {}, "_rel"),
                             Arg::number(Scalar::from_float(atol))}, {}, "_step");
    }
    if (options_.slack) {
      // A scalar input: eager's own error at `of` (upcast_fp64.h).
      auto slack_of = [&](ValueId of, const std::string& suffix) {
        const ValueId slack = g_.add_value(g_.fresh_name(name + suffix), ValueType::tensor(DType::Float64, {}), n.loc);
        g_.inputs.push_back(GraphInput{slack, GraphInput::Role::Input});
        options_.slack->push_back(of);
        return Arg::of(slack);
      };
      if (partner_arg) {
        // Both sides' errors add up: noise where a layer_norm's mean cancels to about 0 on both
        // sides of the comparison (seed 8103343) is absolute, not relative.
        const Arg both = add(OpId::Add, {slack_of(input, "_slack"), slack_of(n.args[*partner_arg].value, "_other_slack")},
                             {}, "_slacks");
        step = add(OpId::Add, {step, both}, {}, "_step_and_slacks");
      } else {
        step = add(OpId::Maximum, {step, slack_of(input, "_slack")}, {}, "_step_or_slack");
      }
    }
    auto moved = [&](double sign, const std::string& suffix) {
      const Arg m = add(sign > 0 ? OpId::Add : OpId::Sub, {x, step}, {}, suffix);
      if (!half) return m;
      return add(OpId::To, {add(OpId::To, {m}, {{"dtype", was.dtype}}, suffix + "_rounded")}, {{"dtype", DType::Float64}},
                 suffix + "_widened");
    };
    if ((n.op == OpId::Eq || n.op == OpId::Ne) && (options_.threshold_nudge < 0 || partner_arg)) {
      // Equality with a number: moving x never lands on it, so the down graph puts x on the
      // number where rounding within the tolerance reaches it (a bfloat16 silu that rounds onto
      // 0.25 in gbc and next to it in eager: seed 8003809); the up graph moves x off it. Between
      // two computed tensors both graphs put x on the other where rounding reaches it: each
      // graph's other thresholds moved its way may be what makes them meet (eq(floor(v), v) of a
      // bfloat16 v just below a whole number in eager and on it in gbc: seed 8301241), and exact
      // ties stay ties, so moving off adds nothing.
      const Arg c = n.args[1 - *arg];
      const Arg reaches = add(OpId::LogicalAnd, {add(OpId::Le, {moved(-1.0, "_lo"), c}, {}, "_lo_le"),
                                                 add(OpId::Ge, {moved(+1.0, "_hi"), c}, {}, "_hi_ge")},
                              {}, "_reaches");
      n.args[*arg] = add(OpId::Where, {reaches, c, x}, {}, "");
    } else if (partner_arg) {
      const Arg other = n.args[*partner_arg];
      n.args[*arg] = add(OpId::Where, {add(OpId::Eq, {x, other}, {}, "_tie"), x, moved(options_.threshold_nudge > 0 ? 1.0 : -1.0, "")},
                         {}, "_or_tie");
    } else {
      n.args[*arg] = moved(options_.threshold_nudge > 0 ? 1.0 : -1.0, "");
    }
    infer(n);
  }

  // An argmax over values within rounding of one another (equal in exact arithmetic, or a near-tie
  // rounding in eager or the compiled path turns around) has no index that float arithmetic
  // decides: each side's rounding picks one. The nudged references pick the first (down) and the
  // last (up) index whose value is within its tolerance of the maximum; the plain reference picks
  // the exact maximum. A row holding NaN keeps its first NaN, as argmax does.
  void break_near_tie(Node& n, std::vector<Node>& out) {
    const ValueId x = n.args[0].value;
    const std::optional<std::vector<int64_t>> dims = n.attr_int_list("dim");
    const bool all = !dims || dims->empty();
    const bool keepdim = n.attr_bool("keepdim", false);
    if (all && keepdim) return;  // the flattened index of a kept-dim result: left to the plain reference
    const auto [rtol, atol] = tolerance_of(original_.type(x).dtype);
    const std::string name = g_.name_of(n.output()) + (options_.threshold_nudge > 0 ? ".last" : ".first");
    auto add = [&](OpId op, std::vector<Arg> args, Attrs attrs, const std::string& suffix) {
      return emit(out, op, std::move(args), std::move(attrs), n.loc, name + suffix);
    };
    Arg values = n.args[0];
    Attrs reduce = {{"keepdim", true}};
    if (all) {
      values = add(OpId::Reshape, {values}, {{"shape", SymShape{DimExpr(-1)}}}, "_flat");
      reduce["dim"] = std::vector<int64_t>{0};
    } else {
      reduce["dim"] = *dims;
    }
    // near: x >= max - (rtol * |max| + atol), or x == max (an infinite maximum)
    const Arg max = add(OpId::Amax, {values}, reduce, "_max");
    const Arg magnitude = add(OpId::Abs, {max}, {}, "_abs");
    const Arg scaled = add(OpId::Mul, {magnitude, Arg::number(Scalar::from_float(rtol))}, {}, "_rel");
    const Arg tol = add(OpId::Add, {scaled, Arg::number(Scalar::from_float(atol))}, {}, "_tol");
    const Arg floor = add(OpId::Sub, {max, tol}, {}, "_floor");
    const Arg within = add(OpId::Ge, {values, floor}, {}, "_within");
    const Arg at_max = add(OpId::Eq, {values, max}, {}, "_at_max");
    const Arg near = add(OpId::LogicalOr, {within, at_max}, {}, "_near");
    // Every near value made the maximum: argmax returns the first of them.
    auto first = [&] {
      n.args[0] = add(OpId::Where, {near, max, values}, {}, "_tied");
      infer(n);
    };
    if (options_.threshold_nudge < 0) return first();
    // The last: the largest position (1, 2, ... along the dim) among the near values, unless the
    // row holds NaN. The positions are ATen's cumsum of ones; where the model's sizes cannot
    // express its type (a product of symbolic sizes), the up graph takes the first as well.
    const Arg ones = add(OpId::Add, {add(OpId::Mul, {add(OpId::To, {near}, {{"dtype", DType::Float64}}, "_near_f64"),
                                                      Arg::number(Scalar::from_float(0.0))}, {}, "_zero"),
                                     Arg::number(Scalar::from_float(1.0))}, {}, "_one");
    const int64_t dim = all ? 0 : dims->front();
    Node cumsum;  // built by hand: make_node treats a node it cannot type as an internal error
    cumsum.op = OpId::Generic;
    cumsum.args = {ones};
    cumsum.attrs = {{kGenericSchemaAttr, std::string("aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor")},
                    {"dim", dim}};
    cumsum.loc = n.loc;
    cumsum.outputs.push_back(g_.add_value(g_.fresh_name(name + "_position"), ValueType{}, n.loc));
    bool typed = false;
    try {
      Diagnostics diags;
      typed = infer_node_types(g_, cumsum, diags);
    } catch (const std::exception&) {
      typed = false;
    }
    if (!typed) return first();
    const Arg position = Arg::of(cumsum.output());
    out.push_back(std::move(cumsum));
    const Arg score = add(OpId::Where, {near, position, Arg::number(Scalar::from_float(0.0))}, {}, "_score");
    Node last = n;
    last.args[0] = score;
    if (all) last.attrs["dim"] = int64_t{0};
    last.outputs = {g_.add_value(name, ValueType{}, n.loc)};
    infer(last);
    const Arg last_index = Arg::of(last.output());
    out.push_back(std::move(last));
    Node first_nan = n;  // the plain argmax: the first NaN of a row that holds one
    first_nan.outputs = {g_.add_value(name + "_nan_index", ValueType{}, n.loc)};
    infer(first_nan);
    const Arg nan_index = Arg::of(first_nan.output());
    out.push_back(std::move(first_nan));
    Attrs row = reduce;
    row["keepdim"] = keepdim;
    const Arg row_max = add(OpId::Amax, {values}, row, "_row_max");
    const Arg has_nan = add(OpId::Ne, {row_max, row_max}, {}, "_has_nan");
    n.op = OpId::Where;
    n.args = {has_nan, nan_index, last_index};
    n.attrs = {};
    infer(n);
  }

  std::pair<double, double> tolerance_of(DType dtype) const {
    switch (dtype) {
      case DType::Float64: return {options_.f64_rtol, options_.f64_atol};
      case DType::Float16: return {options_.f16_rtol, options_.f16_atol};
      case DType::BFloat16: return {options_.bf16_rtol, options_.bf16_atol};
      default: return {options_.f32_rtol, options_.f32_atol};
    }
  }

  // A node of the rewritten graph, appended to `out`; its result as an argument.
  Arg emit(std::vector<Node>& out, OpId op, std::vector<Arg> args, Attrs attrs, const SourceLoc& loc,
           const std::string& name) {
    Node m = make_node(g_, op, std::move(args), std::move(attrs), loc, name);
    const ValueId v = m.output();
    out.push_back(std::move(m));
    return Arg::of(v);
  }

  void retarget_dtype_attr(Node& n) {
    if (n.op != OpId::To && n.op != OpId::Full) return;
    auto dtype = n.attr_dtype("dtype");
    // A float `full` without a dtype is float32 (torch's default dtype).
    bool float_default = !dtype && n.op == OpId::Full && n.attr_scalar("value")->kind == ScalarKind::Float;
    if ((dtype && is_floating(*dtype)) || float_default) n.attrs["dtype"] = DType::Float64;
  }

  void infer(Node& n) {
    Diagnostics diags;
    if (!infer_node_types(g_, n, diags))
      internal_error("upcast_fp64 produced an ill-typed node: " + print_node(g_, n) + "\n" + diags.str());
  }

  bool produces_narrow_float(const Node& n) const {
    if (n.outputs.size() != 1) return false;
    const ValueType& t = g_.type(n.output());
    return t.is_tensor() && is_floating(t.dtype) && t.dtype != DType::Float64;
  }

  // Elementwise ops whose float result came from integer (or bool) operands.
  void widen_integer_operands(Node& n, std::vector<Node>& out) {
    const OpSchema* schema = find_op_schema(n.op);
    GBC_INTERNAL_ASSERT(schema && is_elementwise(schema->cls),
                        "upcast_fp64: '" + op_name(n.op) + "' gives " + g_.type(n.output()).str() + " from float64 operands");
    size_t first = schema->cls == OpClass::Where ? 1 : 0;  // where's condition stays bool
    for (size_t i = first; i < n.args.size(); ++i) {
      Arg& a = n.args[i];
      if (!a.is_value() || !g_.type(a.value).is_tensor() || is_floating(g_.type(a.value).dtype)) continue;
      Node cast = make_node(g_, OpId::To, {a}, {{"dtype", DType::Float64}}, n.loc, g_.name_of(a.value) + ".f64");
      a = Arg::of(cast.output());
      out.push_back(std::move(cast));
    }
  }

  // The reference's layer_norm is the exact formula in two passes, (x - mean) * rsqrt(mean((x -
  // mean)^2) + eps) * w + b, not ATen's kernel: ATen's moments (x * rstd - mean * rstd, a Welford
  // mean) leave a rounding residue where the exact result is 0, which a discrete op after it
  // (ceil, remainder, argmax, eq 0) turns into a whole-number difference that blames the compiled
  // path for being exact. In float64 the residue is ATen's own float64 eager's as well (a row [0, 0,
  // 0, -1, 0, 1] has Welford mean -2.8e-17), so only another formula settles it: here the mean of
  // such a row is sum / N, exactly 0.
  void expand_layer_norm(Node& n, std::vector<Node>& out) {
    const auto normalized = n.attr_shape("normalized_shape");
    if (!normalized || normalized->empty() || n.args.empty() || n.args.size() > 3 || !n.args[0].is_value()) return;
    for (const Arg& a : n.args)
      if (!a.is_value() || !g_.type(a.value).is_tensor() || g_.type(a.value).dtype != DType::Float64) return;
    std::vector<int64_t> dims;
    for (size_t i = normalized->size(); i > 0; --i) dims.push_back(-static_cast<int64_t>(i));
    const Attrs reduce = {{"dim", dims}, {"keepdim", true}};
    const std::string name = g_.name_of(n.output());
    auto emit = [&](OpId op, std::vector<Arg> args, Attrs attrs, const std::string& suffix) {
      out.push_back(make_node(g_, op, std::move(args), std::move(attrs), n.loc, name + suffix));
      return Arg::of(out.back().output());
    };
    const Arg mean = emit(OpId::Mean, {n.args[0]}, reduce, ".ln_mean");
    const Arg centered = emit(OpId::Sub, {n.args[0], mean}, {}, ".ln_centered");
    const Arg square = emit(OpId::Mul, {centered, centered}, {}, ".ln_square");
    const Arg var = emit(OpId::Mean, {square}, reduce, ".ln_var");
    const Arg shifted = emit(OpId::Add, {var, Arg::number(Scalar::from_float(n.attr_float("eps", 1e-5)))}, {}, ".ln_var_eps");
    const Arg rstd = emit(OpId::Rsqrt, {shifted}, {}, ".ln_rstd");
    std::vector<Arg> last = {centered, rstd};
    if (n.args.size() >= 2) last = {emit(OpId::Mul, last, {}, ".ln_normalized"), n.args[1]};
    if (n.args.size() == 3) last = {emit(OpId::Mul, last, {}, ".ln_scaled"), n.args[2]};
    n.op = n.args.size() == 3 ? OpId::Add : OpId::Mul;
    n.args = last;
    n.attrs = {};
    infer(n);
  }

  // LibTorch 1.13's float64 log1p overflows to inf above about 1.8e307 (log1p(4.2e307) is 708.3),
  // so a reference that ran it could not tell eager's inf from gbc's exact result; above 1e300,
  // log1p(x) is log(x) to the last bit (log(1 + 1/x) is below 1e-300).
  void guard_log1p(Node& n, std::vector<Node>& out) {
    if (n.args.size() != 1 || !n.args[0].is_value()) return;
    const ValueType& x = g_.type(n.args[0].value);
    if (!x.is_tensor() || x.dtype != DType::Float64) return;
    const std::string name = g_.name_of(n.output());
    out.push_back(make_node(g_, OpId::Gt, {n.args[0], Arg::number(Scalar::from_float(1e300))}, {}, n.loc, name + ".huge"));
    const Arg huge = Arg::of(out.back().output());
    out.push_back(make_node(g_, OpId::Log, {n.args[0]}, {}, n.loc, name + ".log"));
    const Arg log = Arg::of(out.back().output());
    out.push_back(make_node(g_, OpId::Log1p, {n.args[0]}, {}, n.loc, name + ".log1p"));
    const Arg log1p = Arg::of(out.back().output());
    n.op = OpId::Where;
    n.args = {huge, log, log1p};
    infer(n);
  }

  // var is shift-invariant too, and ATen's float64 var of equal values leaves a residue (the mean
  // of nine equal doubles, sum / 9, is not the value itself: 2.2e-31 where the variance is 0),
  // which a comparison after it (0 < var) turns into a bool difference that blames the compiled
  // path for being exact. Centered twice on the mean over the reduced dims, equal values become
  // exactly 0: the first difference x - mean is exact and has few significant bits, so its own
  // mean is exact.
  void center_var_input(Node& n, std::vector<Node>& out) {
    if (n.args.empty() || !n.args[0].is_value()) return;
    const ValueType& x = g_.type(n.args[0].value);
    if (!x.is_tensor() || x.dtype != DType::Float64) return;
    Attrs reduce = {{"keepdim", true}};
    if (const auto dims = n.attr_int_list("dim")) reduce["dim"] = *dims;
    const std::string name = g_.name_of(n.args[0].value);
    for (const char* pass : {".var_centered", ".var_centered2"})
      center_first_arg(n, reduce, name + pass + "_mean", name + pass, out);
    infer(n);
  }

  // n's first operand minus its mean (a `mean` with `reduce`'s dims and keepdim), both new values
  // named as given and emitted into out before n.
  void center_first_arg(Node& n, const Attrs& reduce, const std::string& mean_name, const std::string& centered_name,
                        std::vector<Node>& out) {
    Node mean = make_node(g_, OpId::Mean, {n.args[0]}, reduce, n.loc, mean_name);
    Node centered = make_node(g_, OpId::Sub, {n.args[0], Arg::of(mean.output())}, {}, n.loc, centered_name);
    n.args[0] = Arg::of(centered.output());
    out.push_back(std::move(mean));
    out.push_back(std::move(centered));
  }

  Graph& g_;
  const Graph& original_;  // the types as loaded: which values were float16, bfloat16, float32
  UpcastOptions options_;
};

// The side of a comparison of two float tensors that is computed, when the other is a graph input
// it is not computed from (a model's threshold passed as a tensor: seed 8103343).
std::optional<size_t> independent_input_side(const Graph& graph, const Node& n) {
  for (size_t side = 0; side < 2; ++side) {
    const ValueId bound = n.args[1 - side].value, computed = n.args[side].value;
    if (!graph.is_graph_input(bound) || graph.is_graph_input(computed)) continue;
    if (!upstream_values(value_producers(graph), computed).count(bound)) return side;
  }
  return std::nullopt;
}

}  // namespace

std::optional<size_t> thresholded_float_arg(const Graph& graph, const Node& n) {
  if (n.outputs.size() != 1 || n.args.empty() || static_cast<size_t>(n.output()) >= graph.values.size()) return std::nullopt;
  const auto float_tensor = [&](const Arg& a) {
    return a.is_value() && static_cast<size_t>(a.value) < graph.values.size() && graph.type(a.value).is_tensor() &&
           is_floating(graph.type(a.value).dtype);
  };
  const ValueType& result = graph.type(n.output());
  switch (n.op) {
    case OpId::To: {
      // A cast to an integer truncates at whole numbers; a cast of a float32 or float64 value to
      // float16 or bfloat16 rounds at the midpoints between two of its values (a batch_norm output
      // 1e-7 apart in eager and gbc, on either side of one: seed 8201398).
      if (!result.is_tensor() || !float_tensor(n.args[0])) return std::nullopt;
      const DType from = graph.type(n.args[0].value).dtype;
      const bool to_half = result.dtype == DType::Float16 || result.dtype == DType::BFloat16;
      const bool from_wide = from == DType::Float32 || from == DType::Float64;
      return is_integral(result.dtype) || (to_half && from_wide) ? std::optional<size_t>(0) : std::nullopt;
    }
    case OpId::Floor:
    case OpId::Ceil:
    case OpId::Round:
    case OpId::Sign: return float_tensor(n.args[0]) ? std::optional<size_t>(0) : std::nullopt;
    case OpId::Lt:
    case OpId::Le:
    case OpId::Gt:
    case OpId::Ge:
    case OpId::Eq:
    case OpId::Ne:
    case OpId::Remainder:
      // A comparison of a computed float with a graph input it does not depend on (a model's
      // threshold passed as a tensor: seed 8103343) thresholds the computed side, as a number does.
      if (n.op != OpId::Remainder && n.args.size() == 2 && float_tensor(n.args[0]) && float_tensor(n.args[1])) {
        if (const std::optional<size_t> side = independent_input_side(graph, n)) return side;
        // Two other float tensors: both sides' rounding decides it (threshold_partner_arg).
        return threshold_partner_arg(graph, n) ? std::optional<size_t>(0) : std::nullopt;
      }
      // The one float tensor among the two operands (a comparison with a number or with an
      // integer tensor, whose values are exact: gt(mean(layer_norm(x)), i) with i an int64 0, seed
      // 8401002; the remainder of an integer by a float).
      if (n.args.size() != 2 || float_tensor(n.args[0]) == float_tensor(n.args[1])) return std::nullopt;
      return float_tensor(n.args[0]) ? 0 : 1;
    default: return std::nullopt;
  }
}

std::optional<size_t> threshold_partner_arg(const Graph& graph, const Node& n) {
  switch (n.op) {
    case OpId::Lt:
    case OpId::Le:
    case OpId::Gt:
    case OpId::Ge:
    case OpId::Eq:
    case OpId::Ne: break;
    default: return std::nullopt;
  }
  if (n.args.size() != 2 || !n.args[0].is_value() || !n.args[1].is_value() || n.args[0].value == n.args[1].value)
    return std::nullopt;  // le(x, x) is exact
  for (const Arg& a : n.args) {
    if (static_cast<size_t>(a.value) >= graph.values.size() || !graph.type(a.value).is_tensor() ||
        !is_floating(graph.type(a.value).dtype))
      return std::nullopt;
  }
  if (independent_input_side(graph, n)) return std::nullopt;  // a threshold passed as an input: thresholded_float_arg's own case
  return 1;
}

bool near_tie_argmax(const Graph& graph, const Node& n) {
  return n.op == OpId::Argmax && n.outputs.size() == 1 && !n.args.empty() && n.args[0].is_value() &&
         static_cast<size_t>(n.args[0].value) < graph.values.size() && graph.type(n.args[0].value).is_tensor() &&
         is_floating(graph.type(n.args[0].value).dtype);
}

Graph upcast_fp64(const Graph& graph, const UpcastOptions& options) {
  Graph g = graph;
  Upcaster(g, graph, options).run();
  return g;
}

}  // namespace gbc
