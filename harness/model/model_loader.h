// Reads a model.yaml (format gbcheck/v1, docs/model-format.md) into a Model: validates every key,
// op, id, dtype and shape, builds the typed graph IR, and reports all problems at once as
// `file:line:col: error: ...; hint: ...` (ModelError). Never crashes on bad input.
#pragma once

#include <string>

#include "harness/model/model.h"

namespace gbc {

/// Loads a model file. Throws ModelError with every diagnostic when the model is invalid.
Model load_model_file(const std::string& path);
/// Loads a model from text; `path` names it in diagnostics.
Model load_model_text(const std::string& text, const std::string& path);

}  // namespace gbc
