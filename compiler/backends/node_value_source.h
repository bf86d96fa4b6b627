// A backend that shows the values of the graph's nodes, not only its outputs, by the model's ids,
// so that `check --intermediates` compares them with eager's (harness/bisect/check_intermediates.h).
// The adapters of gbcheck-adapter/1 that offer node values implement it (docs/adapters.md); gbc's
// ladder shows its node values through the kernel-IR interpreter instead (node_compare.h).
// Test: tests/adapters/python_adapters_test.cpp (IntermediatesThroughAdapters...).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace gbc {

struct NodeValues {
  bool offered = false;     // false: the backend shows no node values at all
  std::string not_offered;  // why, when !offered
  std::vector<at::Tensor> values;     // one per node asked for; undefined where declined
  std::vector<std::string> declined;  // one per node asked for: why it has no value ("" if it has)
};

class NodeValueSource {
 public:
  /// Runs the prepared graph on `inputs` once more and returns the values of `nodes` (the
  /// model's ids) as the backend computed them.
  virtual NodeValues node_values(const std::vector<std::string>& nodes, const std::vector<at::Tensor>& inputs) = 0;

 protected:
  ~NodeValueSource() = default;
};

}  // namespace gbc
