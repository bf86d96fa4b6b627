// Tensors saved (repro folders, --save-inputs, --save-outputs) in a form any reader can load without gbcheck: the elements of
// the tensor made contiguous, as raw little-endian bytes in a .bin file (float16/bfloat16 as their
// 16-bit patterns, bool as one byte), described by a manifest entry {name, dtype, shape, file}
// and, for a tensor that is a view (tensor_layout.h), its "layout" and "dim", so that readers lay
// the values out again as the failure had them.
// repro.cpp reads them with std::ifstream into at::empty, repro.py with torch.frombuffer; both
// work on LibTorch/PyTorch 1.13 and 2.x, which torch::pickle_save's format does not promise.
// Tests: tests/repro/repro_test.cpp, tests/inputs/user_inputs_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <nlohmann/json.hpp>
#include <string>

#include "harness/inputs/tensor_layout.h"

namespace gbc {

/// Writes `tensor` to dir/relative_path (directories created) and returns its manifest entry.
nlohmann::json save_tensor_file(const at::Tensor& tensor, const std::string& name, const std::string& dir,
                                const std::string& relative_path);

/// Reads a tensor back from a manifest entry (relative to dir). std::runtime_error when the file
/// is missing or has the wrong size.
at::Tensor load_tensor_file(const nlohmann::json& entry, const std::string& dir);

/// Adds "layout" (and "dim" for sliced and expanded) to a file entry when `plan` is not contiguous.
void write_layout(const LayoutPlan& plan, nlohmann::json& entry);

/// `values` laid out as the entry's "layout" and "dim" say (contiguous without them).
/// std::runtime_error for an unknown layout or one that cannot apply to the values.
at::Tensor read_layout(const nlohmann::json& entry, const at::Tensor& values);

}  // namespace gbc
