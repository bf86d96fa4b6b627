// A loaded model.yaml: the graph IR plus what the IR does not hold: how to draw each input's
// values, and how to check the model (`check:`). Format: docs/model-format.md.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"
#include "harness/model/check_config.h"

namespace gbc {

/// How a tensor's values are drawn (`values: {dist: normal, mean: 0, std: 1}`).
struct ValueDist {
  enum class Kind : uint8_t { Normal, Uniform, Int, Bernoulli, Const };
  Kind kind = Kind::Normal;
  double a = 0.0;  // normal: mean; uniform/int: low; bernoulli: p; const: value
  double b = 1.0;  // normal: std; uniform/int: high (inclusive for int)
  bool explicit_in_model = false;  // false: the dtype's default

  static ValueDist default_for(DType dtype);
  std::string str() const;  // as written in a model: "{dist: normal, mean: 0.0, std: 1.0}"
};

/// A param's trained values from a weights file (`values: {file: weights.safetensors, tensor: fc.weight}`,
/// harness/model/weights_file.h): contiguous little-endian bytes of the spec's dtype and shape.
struct WeightValues {
  std::string file;    // as written in model.yaml (relative to its folder)
  std::string tensor;  // the name in the file
  std::shared_ptr<const std::string> storage;  // the bytes live at [offset, offset + size)
  size_t offset = 0;
  size_t size = 0;
  const char* data() const { return storage->data() + offset; }
};

struct TensorSpec {
  std::string name;
  ValueId value = kNoValue;
  DType dtype = DType::Float32;
  SymShape shape;
  ValueDist dist;
  SourceLoc loc;
  bool is_param = false;
  std::optional<WeightValues> weights;  // params only: fixed values instead of `dist`
  /// Inputs only (`dtypes: [float32, float64]`): the dtypes cases call the model with, the first
  /// being `dtype`; entry k of every input's list goes together (dtype variant k). Empty: `dtype`.
  std::vector<DType> dtypes;
  SourceLoc dtypes_loc;

  /// The dtype a case of dtype variant `variant` passes.
  DType dtype_in(int64_t variant) const;
};

struct Model {
  std::string path;  // as given on the command line ("" for models built in memory)
  std::string name;
  Graph graph;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> params;
  CheckConfig check;

  /// How many dtype variants the inputs' `dtypes:` lists give (1 when none has one).
  int64_t dtype_variants() const;
  /// The graph as called with dtype variant `variant` (compiler/ir/retype.h); false, with the op
  /// that rejects those dtypes in diags, when it does not type-check.
  bool graph_for_variant(int64_t variant, Graph& out, Diagnostics& diags) const;

  /// Inputs then params, in the order of graph.inputs.
  std::vector<const TensorSpec*> all_tensor_specs() const;
  const TensorSpec* find_spec(const std::string& name) const;
};

}  // namespace gbc
