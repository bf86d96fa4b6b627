// Writes an imported model as a folder: DIR/model.yaml and DIR/weights.safetensors (the params'
// values, harness/model/weights_file.h). Everything is written into a temporary sibling folder that
// is renamed into place at the end, so a failed import leaves nothing half-written.
// Test: tests/import/torchscript_import_test.cpp.
#pragma once

#include <string>

#include "harness/model/model.h"

namespace gbc {

/// Writes `model` into `dir` (which must not exist, or be an empty folder). Throws ModelError
/// (located at the command line) when the folder cannot be written.
void write_model_dir(const Model& model, const std::string& dir, const std::string& header_comment);

}  // namespace gbc
