// Weights files: the trained values of a model's params, in the safetensors layout (an 8-byte
// little-endian header length, a JSON header giving each tensor's dtype, shape and data_offsets,
// then the raw bytes), so Python's `safetensors` opens what `gbcheck import` writes. model.yaml
// refers to a tensor with `values: {file: weights.safetensors, tensor: NAME}` (docs/model-format.md).
// Test: tests/harness/weights_file_test.cpp.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/dtype.h"
#include "harness/model/model.h"

namespace gbc {

struct WeightsEntry {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  size_t offset = 0;  // in WeightsFile::bytes
  size_t size = 0;
};

struct WeightsFile {
  std::shared_ptr<const std::string> bytes;  // the whole file
  std::map<std::string, WeightsEntry> tensors;
};

/// Reads and validates a weights file; on failure returns nullopt and says why in *error
/// ("cannot read ...", "truncated: ...", "not a safetensors file: ...").
std::optional<WeightsFile> read_weights_file(const std::string& path, std::string* error);

/// The safetensors name of a dtype ("F32") and back.
std::string safetensors_dtype(DType dtype);
std::optional<DType> parse_safetensors_dtype(const std::string& name);

/// Writes the weights of `params` (those that have them), each under its tensor name, to `path`.
/// Returns false and says why in *error when the file cannot be written.
bool write_weights_file(const std::string& path, const std::vector<TensorSpec>& params, std::string* error);

}  // namespace gbc
