// What the random graph generator makes: graph sizes, the op mix, dtypes, shapes, how values are
// reused, whether graph breaks and random ops may appear, and the check: section of the generated
// models. The values live in configs/fuzz.yaml (read by fuzz_config.h; docs/configs.md says what
// each key does): a GeneratorConfig made in code has no defaults, so start from
// default_generator_config(). Consumed by generate_model (graph_generator.h); tested in
// tests/fuzz/graph_generator_test.cpp and tests/fuzz/fuzz_config_test.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/ir/config_problem.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/graph.h"

namespace gbc {

/// How a fresh floating input with no domain to respect draws its values (relative weights):
/// normal(0, 1), uniform(-2, 2), integers in [-4, 4] (they make ties for argmax and comparisons),
/// or the constant 1.5.
struct InputValueWeights {
  double normal = 0, uniform = 0, integers = 0, constant = 0;
};

/// Rates of the patterns aimed at what compilers get wrong and plain random graphs rarely reach
/// (issue 18). Each is a probability in [0, 1]; with every rate 0 the generator makes exactly the
/// graphs it made before they existed (no random draw is spent on a pattern whose rate is 0).
struct PatternRates {
  /// A binary op meets an identity: its operand twice (x - x, x / x, min(x, x), x == x) or an
  /// identity number (x * 0, x * 1, x + 0, x + -0.0, x / 1, pow(x, 0), pow(x, 1)).
  double identity = 0;
  /// Such an identity's float operand first gets NaN, +-Inf or -0.0 in place of some elements
  /// (where(x > c, x, special)), where a simplification that forgets them goes wrong. Only when
  /// special_values is above 0.
  double identity_special = 0;
  /// A float number mixed into an integer or bool tensor op is fractional and often negative
  /// (-2.5, 0.5, -0.75), so that promotion changes the result.
  double fractional_numbers = 0;
  /// Integer (and float) div and remainder divide by a negative number or a negated tensor.
  double negative_divisor = 0;
  /// A fresh integer input holds values up to its dtype's extremes (int8's -128 and 127, int32's
  /// limits; int64 within 2^53).
  double integer_extremes = 0;
  /// A fresh shape of two or more dims repeats one of its dims (square, [B, B, N]): a reduction or
  /// broadcast on the wrong axis still type-checks and now gives other values.
  double repeated_dims = 0;
  /// A graph's check.layouts is `any`: its inputs change layout (transposed, sliced, expanded)
  /// between cases, so a compiled entry meets other strides and must guard and recompile.
  double varied_layouts = 0;
  /// A graph's inputs of float32, float16, bfloat16 or int32 get a `dtypes:` list with a wider
  /// dtype of their family (float64, float32, int64): cases pass either, so a compiled entry meets
  /// another dtype and must guard and recompile (kept only where every node accepts the wider one).
  double varied_dtypes = 0;
  /// A graph's check.recompile_sequence is true: cases 1 to 4 change sizes, then layouts, then
  /// dtypes, then go back to case 0's.
  double recompile_sequence = 0;
  /// An in-place op is made on a view (slice, transpose) of a fresh tensor, its own result unused,
  /// and the base is read after it: the write reaches the output only through the alias.
  double view_mutation = 0;
  /// An operand the generator would make a fresh input becomes a `full` constant of the same
  /// dtype and shape (value drawn as numbers are: special ones included), so elementwise ops meet
  /// constants and constant folding evaluates them in place of the kernels.
  double constant_operands = 0;
};

struct GeneratorConfig {
  /// Nodes per graph, nested `if` branches included; each graph draws its size in this range.
  int min_nodes = 0;
  int max_nodes = 0;
  /// Dtypes of generated inputs and casts. The first is the graph's main dtype, taken with
  /// probability main_dtype_rate before a uniform pick among all. At least one must be floating.
  std::vector<DType> dtypes;
  double main_dtype_rate = 0;
  /// Relative weight of each op (names as in model.yaml); 0 disables one. Every op has an entry.
  std::map<std::string, double> op_weights;
  /// Graph breaks: print, item, if, nonzero, and custom kernels without `meta: same_as_input`.
  /// Off gives straight-line graphs that a compiler can capture whole.
  bool allow_breaks = false;
  /// dropout in training mode (the only op whose result is random).
  bool allow_random = false;
  /// check.special_values of every model (NaN/Inf/... in float inputs), and the rate at which a
  /// float number written in args is NaN or +-Inf.
  double special_values = 0;
  int max_rank = 0;
  /// Relative weight of each tensor rank 0..8 when a shape is drawn (ranks above max_rank unused).
  std::vector<double> rank_weights;
  /// No tensor may hold more elements than this for any value of the dims.
  int64_t max_numel = 0;
  /// Largest size of an input's dim: symbolic ranges and constant sizes stay within it.
  int64_t max_dim_size = 0;
  /// Symbolic dims declared per graph, at most (each with a small range).
  int max_symbolic_dims = 0;
  /// A drawn dim is a declared symbolic dim with this probability (when there are any), else 1
  /// with probability size_one_rate (broadcasting), else a constant in [2, max_dim_size].
  double symbolic_dim_rate = 0;
  double size_one_rate = 0;
  /// An op's operand is an existing value with probability reuse_rate (when one fits), else a
  /// fresh input; among existing values, one nobody uses yet with probability prefer_unused_rate.
  double reuse_rate = 0;
  double prefer_unused_rate = 0;
  InputValueWeights input_values;
  PatternRates patterns;
  /// check.backends of generated models; empty keeps the format's default.
  std::vector<std::string> backends;
  /// check.device. On cpu, ops are only given dtypes that LibTorch 1.13's CPU kernels implement.
  std::string device;
  /// check.cases of generated models.
  int cases = 0;
};

/// Every problem of `config`: unknown or missing op weights, min_nodes > max_nodes, no floating
/// dtype, a rate outside [0, 1], a size out of range, ...
std::vector<ConfigProblem> generator_config_problems(const GeneratorConfig& config);

/// Throws std::invalid_argument with the first problem ("generator config: max_rank must be ...").
void validate_generator_config(const GeneratorConfig& config);

/// Whether a node makes graph compilers split the graph: print, item, if, nonzero, and custom
/// without `meta: same_as_input` (compilers cannot know its output type).
bool is_graph_break_node(const Node& node);

/// The weight op gets under config (its op_weights entry; 0 for an op without one).
double op_weight(const GeneratorConfig& config, OpId op);

}  // namespace gbc
