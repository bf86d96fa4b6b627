// A model from inline YAML text, the way the suites write their test inputs (as ninja's tests
// do): a model that does not load fails the test with its diagnostics and the text. Used by
// tests/aten/aten_test_util.h, tests/runtime/runtime_test_util.h and the tests/backends/ suites.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "harness/model/model_loader.h"

namespace gbc::testing {

/// Loads `text` as the model file `path`; a ModelError fails the test (and is rethrown).
inline Model load(const std::string& text, const std::string& path = "test.yaml") {
  try {
    return load_model_text(text, path);
  } catch (const ModelError& e) {
    ADD_FAILURE() << "model does not load:\n" << e.diagnostics().str() << "\n" << text;
    throw;
  }
}

}  // namespace gbc::testing
