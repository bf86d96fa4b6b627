// What a set of generated graphs exercises, as op x dtype x layout x special-value combinations
// (issue 18's coverage report): every node counts once per graph under the dtype it computes in
// (its first tensor operand's, else its result's), the layouts its graph's inputs arrive in
// (`contiguous`, or `strided` when check.layouts is any or the recompile sequence runs), and
// whether NaN/Inf can reach its operands (`special`: check.special_values above 0 and a floating
// input upstream, or a non-finite number or fill in the graph). A graph with `dtypes:` lists counts
// again with each variant's types. `gbcheck-gen --coverage-report FILE` writes it.
// Test: tests/fuzz/combo_coverage_test.cpp.
#pragma once

#include <map>
#include <set>
#include <string>
#include <tuple>

#include "harness/model/model.h"

namespace gbc {

class ComboCoverage {
 public:
  /// Counts the combinations `model`'s nodes exercise.
  void add(const Model& model);

  /// (op, dtype, layout, special) -> graphs whose nodes exercised it.
  using Combo = std::tuple<std::string, DType, std::string, bool>;
  const std::map<Combo, int>& counts() const { return counts_; }
  int graphs() const { return graphs_; }

  /// A summary (ops, op x dtype pairs and full combinations seen, ops never made) and then one
  /// line per combination: "add float32 strided special 12".
  std::string report() const;

 private:
  void add_graph(const Graph& graph, const Model& model);

  std::map<Combo, int> counts_;
  int graphs_ = 0;
};

}  // namespace gbc
