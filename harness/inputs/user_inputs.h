// The user's own input values (--inputs, docs/importing.md "Inputs from files"): read from a
// torch.save file of a tuple, list or dict of tensors, from a folder of raw tensor files with a
// manifest.json (what repro and --save-inputs write, tensor_files.h), from the inputs.json that
// reduce writes, or from a folder of case-K folders (one case each); then matched to the model's
// inputs by name (dict keys, manifest names; a named param's value replaces the drawn one) or position, and checked against each input's dtype
// and shape, its symbolic dims bound the same way in every input. A view keeps its layout (the
// layout key of inputs.json and manifest.json, a torch.save tensor's strides). Every problem is a ModelError
// naming the file and the input (exit 2). Test: tests/inputs/user_inputs_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

#include "harness/model/model.h"

namespace gbc {

/// One case's tensors as a file holds them.
struct GivenTensors {
  std::string source;              // the file or folder they came from
  std::vector<std::string> names;  // empty: by position (a torch.save tuple or list)
  std::vector<at::Tensor> tensors;
};

/// One case of the user's, matched to the model's inputs.
struct GivenCase {
  std::string source;
  DimBindings dims;
  std::vector<at::Tensor> inputs;         // model.inputs order, on the CPU, views kept
  std::vector<std::string> descriptions;  // as a generated case's: "x: float32[1, 3] from FILE"
  /// Params the file names too (reduce's inputs.json holds the failing case's params): their
  /// values replace the drawn ones, so a reduced failure replays with exactly its own values.
  std::vector<std::pair<std::string, at::Tensor>> params;
};

/// Reads the cases at `path` (a file, or a folder of one case or of case-K folders, in K order).
std::vector<GivenTensors> read_given_tensors(const std::string& path);

/// Matches one case to the model's inputs and checks its dtypes, shapes and dims.
GivenCase match_given_tensors(const Model& model, const GivenTensors& given);

/// read_given_tensors and match_given_tensors over every path, in order.
std::vector<GivenCase> load_given_cases(const Model& model, const std::vector<std::string>& paths);

}  // namespace gbc
