// The op table of the model format as text or markdown, rendered from the schema table.
#pragma once

#include <string>

namespace gbc {

std::string render_ops_table(bool markdown);

}  // namespace gbc
