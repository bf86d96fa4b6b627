// The command line's description of a TorchScript model's inputs: `--input [NAME=]DTYPE[SHAPE]`
// (in forward's argument order; a size may be a dim name) and `--dim NAME=MIN:MAX`.
// Errors are ModelErrors located at the command line. Test: tests/import/input_spec_test.cpp.
#pragma once

#include <string>
#include <vector>

#include "compiler/ir/dim.h"
#include "compiler/ir/dtype.h"

namespace gbc {

struct InputSpec {
  std::string name;  // "" : forward's argument name
  DType dtype = DType::Float32;
  SymShape shape;
  std::string text;  // as given, for messages
};

struct ImportSpecs {
  std::vector<InputSpec> inputs;
  DimSpace dims;
};

/// Parses every --input and --dim; a shape's names must be declared by a --dim.
ImportSpecs parse_import_specs(const std::vector<std::string>& inputs, const std::vector<std::string>& dims);

}  // namespace gbc
