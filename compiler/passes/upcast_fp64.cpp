#include "compiler/passes/upcast_fp64.h"

#include <optional>
#include <string>

#include "compiler/ir/infer.h"
#include "compiler/ir/op_schema.h"
#include "compiler/ir/printer.h"
#include "compiler/passes/graph_rewrite.h"

namespace gbc {
namespace {

class Upcaster {
 public:
  Upcaster(Graph& graph, const UpcastOptions& options) : g_(graph), original_(graph), options_(options) {}

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
      if (produces_narrow_float(n)) {
        widen_integer_operands(n, out);
        infer(n);
      }
      if (n.op == OpId::LayerNorm) center_layer_norm_input(n, out);
      if (n.op == OpId::Var) center_var_input(n, out);
      if (half) keep_half_rounding(n, *half, out);
      if (options_.cast_nudge != 0) nudge_integer_cast_input(n, out);
      out.push_back(std::move(n));
    }
    block.nodes = std::move(out);
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

  // A cast of a float value to an integer dtype truncates, so a value within rounding of a whole
  // number (or, for a float16/bfloat16 value, of a midpoint between two of its values) lands on
  // either side in eager and in the compiled path. For the range of results that rounding reaches
  // (upcast_fp64.h), the cast's input moves by its tolerance in the direction of cast_nudge, and a
  // float16/bfloat16 value is rounded to its dtype again, as the program stores it.
  void nudge_integer_cast_input(Node& n, std::vector<Node>& out) {
    if (n.op != OpId::To || n.args.empty() || !n.args[0].is_value() || n.outputs.size() != 1) return;
    const ValueType& result = g_.type(n.output());
    const ValueId input = n.args[0].value;
    // An integer cast's input is a value of the loaded graph (values added here come after them).
    if (!result.is_tensor() || !is_integral(result.dtype) || static_cast<size_t>(input) >= original_.values.size()) return;
    const ValueType& was = original_.type(input);
    if (!was.is_tensor() || !is_floating(was.dtype)) return;
    const bool f64 = was.dtype == DType::Float64;
    const double rtol = f64 ? options_.f64_rtol : options_.f32_rtol, atol = f64 ? options_.f64_atol : options_.f32_atol;
    const double sign = options_.cast_nudge > 0 ? 1.0 : -1.0;
    const std::string name = g_.name_of(n.args[0].value) + (options_.cast_nudge > 0 ? ".up" : ".down");
    // x + sign * (rtol * |x| + atol)
    Node magnitude = make_node(g_, OpId::Abs, {n.args[0]}, {}, n.loc, name + "_abs");
    Node scaled = make_node(g_, OpId::Mul, {Arg::of(magnitude.output()), Arg::number(Scalar::from_float(sign * rtol))}, {},
                            n.loc, name + "_rel");
    Node step = make_node(g_, OpId::Add, {Arg::of(scaled.output()), Arg::number(Scalar::from_float(sign * atol))}, {}, n.loc,
                          name + "_step");
    Node moved = make_node(g_, OpId::Add, {n.args[0], Arg::of(step.output())}, {}, n.loc, name);
    n.args[0] = Arg::of(moved.output());
    for (Node* m : {&magnitude, &scaled, &step, &moved}) out.push_back(std::move(*m));
    if (was.dtype != DType::Float16 && was.dtype != DType::BFloat16) return;
    Node rounded = make_node(g_, OpId::To, {n.args[0]}, {{"dtype", was.dtype}}, n.loc, name + "_rounded");
    Node widened = make_node(g_, OpId::To, {Arg::of(rounded.output())}, {{"dtype", DType::Float64}}, n.loc, name + "_widened");
    n.args[0] = Arg::of(widened.output());
    out.push_back(std::move(rounded));
    out.push_back(std::move(widened));
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

  // layer_norm is shift-invariant: its input minus its mean over the normalized dims gives the same
  // result, and ATen's formula (x * rstd - mean * rstd) then has nothing left to cancel. Without it
  // the reference keeps a rounding residue where the exact result is 0 (a one-element row), which a
  // discrete op after it (ceil, remainder, argmax, ge) turns into a whole-number difference that
  // blames the compiled path for being exact.
  void center_layer_norm_input(Node& n, std::vector<Node>& out) {
    const auto normalized = n.attr_shape("normalized_shape");
    if (!normalized || normalized->empty() || n.args.empty() || !n.args[0].is_value()) return;
    const ValueType& x = g_.type(n.args[0].value);
    if (!x.is_tensor() || x.dtype != DType::Float64) return;
    std::vector<int64_t> dims;
    for (size_t i = normalized->size(); i > 0; --i) dims.push_back(-static_cast<int64_t>(i));
    const std::string name = g_.name_of(n.args[0].value);
    center_first_arg(n, {{"dim", dims}, {"keepdim", true}}, name + ".ln_mean", name + ".ln_centered", out);
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
  const Graph original_;  // the types as loaded: which values were float16, bfloat16, float32
  UpcastOptions options_;
};

}  // namespace

Graph upcast_fp64(const Graph& graph, const UpcastOptions& options) {
  Graph g = graph;
  Upcaster(g, options).run();
  return g;
}

}  // namespace gbc
