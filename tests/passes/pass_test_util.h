// Helpers shared by the pass tests: graphs from inline model.yaml text (format line and name added
// here, so each test shows only its graph) and the IR text the tests compare (no locations).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "compiler/ir/printer.h"
#include "harness/model/model_loader.h"

namespace gbc::testing {

/// Loads "format: gbcheck/v1\nname: t\n" + body; a model that does not load fails the test.
inline Graph graph_of(const std::string& body) {
  std::string text = "format: gbcheck/v1\nname: t\n" + body;
  try {
    return load_model_text(text, "t.yaml").graph;
  } catch (const ModelError& e) {
    ADD_FAILURE() << "model does not load:\n" << e.diagnostics().str() << "\n" << text;
    throw;
  }
}

/// The IR as the tests compare it: print_graph without locations.
inline std::string ir(const Graph& g) { return print_graph(g, PrintOptions{/*locations=*/false}); }

}  // namespace gbc::testing
