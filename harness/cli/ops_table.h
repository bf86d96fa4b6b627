// The op table of the model format as text, markdown or JSON, rendered from the schema table.
// Test: tests/cli/new_user_test.cpp (JSON); docs/model-format.md embeds the markdown.
#pragma once

#include <string>

namespace gbc {

std::string render_ops_table(bool markdown);

/// The same table as JSON (schema gbcheck.ops/v1, docs/json-report.md), for tools.
std::string render_ops_json();

}  // namespace gbc
