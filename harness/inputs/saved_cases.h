// --save-inputs and --save-outputs: what a run used and produced, one folder per case in the raw
// format of tensor_files.h (DIR/case-K/manifest.json with a .bin file per tensor), so that
// `--inputs DIR/case-K` (or `--inputs DIR`, every case) reads the inputs back. Each case is written
// under a temporary name and renamed when complete: a folder case-K is never half-written.
// Test: tests/inputs/user_inputs_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <utility>
#include <vector>

namespace gbc {

using NamedTensors = std::vector<std::pair<std::string, at::Tensor>>;

/// The name of case `index`'s folder: "case-3".
std::string case_folder_name(int index);

/// Writes DIR/case-K/manifest.json ({"case": K, key: [entries]}) and the tensors' files, and each
/// of `subfolders` as DIR/case-K/NAME/manifest.json in the same form; replaces an older case-K.
/// Throws std::runtime_error when DIR cannot be written.
void save_case_folder(const std::string& dir, int index, const std::string& key, const NamedTensors& tensors,
                      const std::vector<std::pair<std::string, NamedTensors>>& subfolders = {});

}  // namespace gbc
