// The parts of an ATen schema string ("aten::max_pool2d(Tensor self, int[2] kernel_size, int[2]
// stride=[], ...) -> Tensor"), read as text without LibTorch: the generic `aten` op keeps its
// schema this way (generic_op.h), and the TorchScript emitter writes its calls from it.
// Test: tests/ir/schema_string_test.cpp.
#pragma once

#include <string>
#include <vector>

namespace gbc {

struct SchemaArgument {
  std::string type;  // without alias annotations: "Tensor", "int[2]", "ScalarType?", "Tensor?[]"
  std::string name;
  bool has_default = false;
  bool keyword_only = false;  // after the schema's `*`
};

struct SchemaSignature {
  std::string name;                     // "aten::max_pool2d.with_indices"
  std::vector<SchemaArgument> arguments;
  std::vector<std::string> returns;     // each result's type: "Tensor", "Tensor[]"
};

/// Throws std::invalid_argument, naming the schema, when the text is not a schema.
SchemaSignature parse_schema_string(const std::string& schema);

}  // namespace gbc
