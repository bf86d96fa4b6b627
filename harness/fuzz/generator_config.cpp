#include "harness/fuzz/generator_config.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "compiler/ir/generic_op.h"
#include "compiler/ir/op_schema.h"

namespace gbc {
namespace {

bool is_weight(double w) { return w >= 0 && std::isfinite(w); }
bool is_rate(double r) { return r >= 0 && r <= 1; }

// The ranks rank_weights covers: 0 up to the largest max_rank.
constexpr int kMaxRank = 8;

}  // namespace

std::vector<ConfigProblem> generator_config_problems(const GeneratorConfig& c) {
  std::vector<ConfigProblem> out;
  auto fail = [&out](std::vector<std::string> keys, const std::string& message) { out.push_back({std::move(keys), message}); };
  auto rate = [&](const char* key, double value) {
    if (!is_rate(value)) fail({key}, std::string(key) + " is a rate and must be in [0, 1]");
  };
  if (c.min_nodes < 1) fail({"min_nodes"}, "min_nodes must be at least 1, got " + std::to_string(c.min_nodes));
  if (c.max_nodes < c.min_nodes)
    fail({"max_nodes", "min_nodes"},
         "max_nodes (" + std::to_string(c.max_nodes) + ") is below min_nodes (" + std::to_string(c.min_nodes) + ")");
  if (c.dtypes.empty()) fail({"dtypes"}, "dtypes is empty");
  else if (std::none_of(c.dtypes.begin(), c.dtypes.end(), is_floating))
    fail({"dtypes"}, "dtypes needs a floating dtype: most ops (exp, matmul, softmax, ...) take only floating tensors");
  rate("main_dtype_rate", c.main_dtype_rate);
  for (const auto& [op, weight] : c.op_weights) {
    if (!find_op_schema(op)) {
      std::string close = closest_op_name(op);
      fail({"op_weights." + op, "op_weights"},
           "op_weights names unknown op '" + op + "'" + (close.empty() ? "" : " (did you mean '" + close + "'?)"));
    }
    if (!is_weight(weight)) fail({"op_weights." + op, "op_weights"}, "op_weights." + op + " must be a finite weight >= 0");
  }
  bool any_op = false;
  for (const auto& s : all_op_schemas()) {
    if (s.id == OpId::Generic) continue;  // imported models' op: nothing to generate it from
    if (!c.op_weights.count(s.name)) fail({"op_weights"}, "op_weights has no weight for op '" + s.name + "'");
    any_op = any_op || op_weight(c, s.id) > 0;
  }
  if (!any_op) fail({"op_weights"}, "op_weights disables every op");
  rate("special_values", c.special_values);
  if (c.max_rank < 1 || c.max_rank > kMaxRank)
    fail({"max_rank"}, "max_rank must be in [1, " + std::to_string(kMaxRank) + "], got " + std::to_string(c.max_rank));
  if (c.rank_weights.size() != kMaxRank + 1) {
    fail({"rank_weights"}, "rank_weights needs one weight for each rank 0 to " + std::to_string(kMaxRank) + ", got " +
                               std::to_string(c.rank_weights.size()));
  } else {
    if (!std::all_of(c.rank_weights.begin(), c.rank_weights.end(), is_weight))
      fail({"rank_weights"}, "rank_weights must be finite weights >= 0");
    else if (c.max_rank >= 1 && c.max_rank <= kMaxRank &&
             std::all_of(c.rank_weights.begin(), c.rank_weights.begin() + c.max_rank + 1, [](double w) { return w == 0; }))
      fail({"rank_weights", "max_rank"}, "rank_weights gives every rank up to max_rank (" + std::to_string(c.max_rank) +
                                             ") the weight 0");
  }
  if (c.max_dim_size < 2 || c.max_dim_size > 64)
    fail({"max_dim_size"}, "max_dim_size must be in [2, 64], got " + std::to_string(c.max_dim_size));
  // conv2d and the reshapes need room for a few elements per tensor.
  if (c.max_numel < 64) fail({"max_numel"}, "max_numel must be at least 64, got " + std::to_string(c.max_numel));
  if (c.max_symbolic_dims < 0 || c.max_symbolic_dims > 4)
    fail({"max_symbolic_dims"}, "max_symbolic_dims must be in [0, 4], got " + std::to_string(c.max_symbolic_dims));
  rate("symbolic_dim_rate", c.symbolic_dim_rate);
  rate("size_one_rate", c.size_one_rate);
  rate("reuse_rate", c.reuse_rate);
  rate("prefer_unused_rate", c.prefer_unused_rate);
  const InputValueWeights& v = c.input_values;
  if (!is_weight(v.normal) || !is_weight(v.uniform) || !is_weight(v.integers) || !is_weight(v.constant))
    fail({"input_values"}, "input_values must be finite weights >= 0");
  else if (v.normal + v.uniform + v.integers + v.constant == 0)
    fail({"input_values"}, "input_values gives every distribution the weight 0");
  const PatternRates& p = c.patterns;
  for (const auto& [key, value] : std::vector<std::pair<const char*, double>>{{"identity", p.identity},
                                                                              {"identity_special", p.identity_special},
                                                                              {"fractional_numbers", p.fractional_numbers},
                                                                              {"negative_divisor", p.negative_divisor},
                                                                              {"integer_extremes", p.integer_extremes},
                                                                              {"repeated_dims", p.repeated_dims},
                                                                              {"varied_layouts", p.varied_layouts},
                                                                              {"varied_dtypes", p.varied_dtypes},
                                                                              {"recompile_sequence", p.recompile_sequence},
                                                                              {"view_mutation", p.view_mutation},
                                                                              {"constant_operands", p.constant_operands}})
    if (!is_rate(value)) fail({"patterns." + std::string(key), "patterns"}, "patterns." + std::string(key) + " is a rate and must be in [0, 1]");
  if (c.device != "cpu" && c.device != "cuda") fail({"device"}, "device must be cpu or cuda, got '" + c.device + "'");
  if (c.cases < 1) fail({"cases"}, "cases must be at least 1");
  return out;
}

void validate_generator_config(const GeneratorConfig& c) {
  std::vector<ConfigProblem> problems = generator_config_problems(c);
  if (!problems.empty()) throw std::invalid_argument("generator config: " + problems.front().message);
}

bool is_graph_break_node(const Node& node) {
  if (node.op == OpId::Print || node.op == OpId::Item || node.op == OpId::If || node.op == OpId::Nonzero) return true;
  return node.op == OpId::Custom && node.attr_string("meta", "none") != "same_as_input";
}

double op_weight(const GeneratorConfig& config, OpId op) {
  auto it = config.op_weights.find(op_name(op));
  return it == config.op_weights.end() ? 0.0 : it->second;
}

}  // namespace gbc
