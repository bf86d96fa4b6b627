#include "harness/fuzz/generator_config.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "compiler/ir/op_schema.h"

namespace gbc {

void validate_generator_config(const GeneratorConfig& c) {
  auto fail = [](const std::string& message) { throw std::invalid_argument("generator config: " + message); };
  if (c.min_nodes < 1) fail("min_nodes must be at least 1, got " + std::to_string(c.min_nodes));
  if (c.max_nodes < c.min_nodes)
    fail("max_nodes (" + std::to_string(c.max_nodes) + ") is below min_nodes (" + std::to_string(c.min_nodes) + ")");
  if (c.dtypes.empty()) fail("dtypes is empty");
  if (std::none_of(c.dtypes.begin(), c.dtypes.end(), is_floating))
    fail("dtypes needs a floating dtype: most ops (exp, matmul, softmax, ...) take only floating tensors");
  for (const auto& [op, weight] : c.op_weights) {
    if (!find_op_schema(op)) {
      std::string close = closest_op_name(op);
      fail("op_weights names unknown op '" + op + "'" + (close.empty() ? "" : " (did you mean '" + close + "'?)"));
    }
    if (!(weight >= 0) || !std::isfinite(weight)) fail("op_weights." + op + " must be a finite weight >= 0");
  }
  bool any_op = false;
  for (const auto& s : all_op_schemas()) any_op = any_op || op_weight(c, s.name) > 0;
  if (!any_op) fail("op_weights disables every op");
  if (!(c.special_values >= 0 && c.special_values <= 1)) fail("special_values is a rate and must be in [0, 1]");
  if (c.max_rank < 1 || c.max_rank > 8) fail("max_rank must be in [1, 8], got " + std::to_string(c.max_rank));
  if (c.max_dim_size < 2 || c.max_dim_size > 64)
    fail("max_dim_size must be in [2, 64], got " + std::to_string(c.max_dim_size));
  // conv2d and the reshapes need room for a few elements per tensor.
  if (c.max_numel < 64) fail("max_numel must be at least 64, got " + std::to_string(c.max_numel));
  if (c.max_symbolic_dims < 0 || c.max_symbolic_dims > 4)
    fail("max_symbolic_dims must be in [0, 4], got " + std::to_string(c.max_symbolic_dims));
  if (c.device != "cpu" && c.device != "cuda") fail("device must be cpu or cuda, got '" + c.device + "'");
  if (c.cases < 1) fail("cases must be at least 1");
}

bool is_graph_break_node(const Node& node) {
  if (node.op == "print" || node.op == "item" || node.op == "if" || node.op == "nonzero") return true;
  return node.op == "custom" && node.attr_string("meta", "none") != "same_as_input";
}

double op_weight(const GeneratorConfig& config, const std::string& op) {
  auto it = config.op_weights.find(op);
  return it == config.op_weights.end() ? 1.0 : it->second;
}

}  // namespace gbc
