// upcast_fp64: the same program computed in float64, for the fp64 oracle's reference.
// Runs on the graph as loaded (not part of the pipeline). Test: tests/passes/upcast_fp64_test.cpp.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "compiler/ir/graph.h"

namespace gbc {

/// Every floating dtype becomes float64: graph inputs and params, `to` targets, `full` dtypes
/// (a float `full` without a dtype gets dtype float64); types are re-inferred. A `to` or `full` of
/// float16 or bfloat16 still rounds to it (the program's own rounding), then widens to float64, and
/// so does every other op's float16/bfloat16 result (ATen stores it rounded), but a view's or an
/// in-place op's. Integer and bool
/// values stay as they are, except where an op turns them into floats (exp of an int tensor,
/// int / int, int tensor * 2.5): ATen would give float32 there, so their integer operands are
/// cast to float64 first and the result is float64 too. A layer_norm is the exact formula in two
/// passes, (x - mean) * rsqrt(mean((x - mean)^2) + eps) * w + b, without ATen's rounding residue
/// where the result is exactly 0 (its Welford mean of [0, 0, 0, -1, 0, 1] is -2.8e-17); a var's input is centered twice on its mean over the reduced dims, which
/// makes a var of equal values exactly 0. The graph's value ids are kept; added values come after them.
///
/// With threshold_nudge -1 or +1, the float value under every threshold the program puts on one
/// (a cast to an integer dtype, a cast of a float32/float64 value to float16/bfloat16, which rounds
/// at the midpoints between two of its values, floor, ceil, round, sign, a comparison of a tensor with a number,
/// an integer tensor or a graph input it is not computed from, a remainder with one float tensor; a comparison of
/// two other float tensors as threshold_partner_arg says)
/// moves down or up by its tolerance (rtol * |x| + atol, float32's for float32, float16 and
/// bfloat16 values, which are computed in float32, float64's for float64 ones; a float16/bfloat16
/// value is then rounded to its dtype again): the two graphs bound what rounding of that value can
/// decide (a value within rounding of a whole number, of a comparison's number, or of a midpoint
/// between two bfloat16 values, lands on either side in eager and in the compiled path). An
/// equality with a number (eq, ne) is a threshold no move lands on: with -1 the value becomes the
/// number where its moves down and up (rounded as above) bracket it.
///
/// The nudged graphs also break the near-ties of every argmax of a float tensor: -1 gives the first
/// and +1 the last index whose value is within the tolerance of the maximum (the argmax input's
/// dtype's tolerance: its float16 and bfloat16 values are rounded to that dtype), where rounding in
/// eager or in the compiled path may pick either.
///
/// With `slack` given (a nudged graph), every thresholded value also gets a float64 scalar graph
/// input after the graph's own, its slack: the value moves by max(its tolerance, slack) (two
/// computed tensors compared: by both relative tolerances plus both slacks). The caller
/// passes eager's own error there (its distance from the reference), so that rounding noise eager
/// carries into a threshold, which can far exceed a tolerance (bfloat16 values summing to an exact
/// 0), bounds what the compiled path may decide there too. `slack` receives the thresholded
/// values' ids, in the order of the added inputs.
struct UpcastOptions {
  int threshold_nudge = 0;
  double f32_rtol = 0, f32_atol = 0, f64_rtol = 0, f64_atol = 0;
  double f16_rtol = 0, f16_atol = 0, bf16_rtol = 0, bf16_atol = 0;
  std::vector<ValueId>* slack = nullptr;
};
Graph upcast_fp64(const Graph& graph, const UpcastOptions& options = {});

/// The argument of n that holds a float value under a threshold, as threshold_nudge moves it (the
/// input of an integer cast, of a float32/float64 value's cast to float16/bfloat16, floor, ceil, round or sign; the tensor of a comparison with a number or an integer tensor,
/// or the computed side of a comparison with a graph input it is not computed from, or operand 0 of
/// a comparison of two other float tensors; the one float tensor of a remainder), judged on
/// `graph`'s types; nullopt for every other node.
std::optional<size_t> thresholded_float_arg(const Graph& graph, const Node& n);
/// For a comparison of two different float tensors that are not a computed value and a graph
/// input it is not computed from (thresholded_float_arg's case), the operand the thresholded one
/// (operand 0) is compared with: rounding on both sides decides it, so the nudged graphs move
/// operand 0 by both operands' relative tolerance in their own dtypes plus both operands' slacks
/// (no absolute tolerance) where the two differ, and keep exact ties. nullopt otherwise.
std::optional<size_t> threshold_partner_arg(const Graph& graph, const Node& n);
/// n is an argmax of a float tensor (judged on `graph`'s types), whose near-ties threshold_nudge breaks.
bool near_tie_argmax(const Graph& graph, const Node& n);

}  // namespace gbc
