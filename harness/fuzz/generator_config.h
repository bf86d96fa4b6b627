// What the random graph generator makes: graph sizes, the op mix, dtypes, whether graph breaks
// and random ops may appear, and the check: section of the generated models. Consumed by
// generate_model (graph_generator.h); tested in tests/fuzz/graph_generator_test.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "compiler/ir/dtype.h"
#include "compiler/ir/graph.h"

namespace gbc {

struct GeneratorConfig {
  /// Nodes per graph, nested `if` branches included; each graph draws its size in this range.
  int min_nodes = 5;
  int max_nodes = 20;
  /// Dtypes of generated inputs and casts. The first is the graph's main dtype: fresh inputs take
  /// it half the time. At least one must be floating (most ops need one).
  std::vector<DType> dtypes = {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int64,
                               DType::Int32,   DType::Int16,   DType::Int8,    DType::UInt8,    DType::Bool};
  /// Relative weight of each op (names as in model.yaml). Ops not listed weigh 1; 0 disables one.
  std::map<std::string, double> op_weights;
  /// Graph breaks: print, item, if, nonzero, and custom kernels without `meta: same_as_input`.
  /// Off gives straight-line graphs that a compiler can capture whole.
  bool allow_breaks = true;
  /// dropout in training mode (the only op whose result is random).
  bool allow_random = true;
  /// check.special_values of every model (NaN/Inf/... in float inputs), and the rate at which a
  /// float number written in args is NaN or +-Inf.
  double special_values = 0.02;
  int max_rank = 4;
  /// No tensor may hold more elements than this for any value of the dims.
  int64_t max_numel = 4096;
  /// Largest size of an input's dim: symbolic ranges and constant sizes stay within it.
  int64_t max_dim_size = 6;
  /// Symbolic dims declared per graph, at most (each with a small range).
  int max_symbolic_dims = 3;
  /// check.backends of generated models; empty keeps the format's default.
  std::vector<std::string> backends;
  /// check.device. On cpu, ops are only given dtypes that LibTorch 1.13's CPU kernels implement.
  std::string device = "cpu";
  /// check.cases of generated models.
  int cases = 8;
};

/// Throws std::invalid_argument with a message naming the bad field (unknown op in op_weights,
/// min_nodes > max_nodes, no floating dtype, ...).
void validate_generator_config(const GeneratorConfig& config);

/// Whether a node makes graph compilers split the graph: print, item, if, nonzero, and custom
/// without `meta: same_as_input` (compilers cannot know its output type).
bool is_graph_break_node(const Node& node);

/// The weight op gets under config (its op_weights entry, else 1).
double op_weight(const GeneratorConfig& config, const std::string& op);

}  // namespace gbc
