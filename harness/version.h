// gbcheck's own version (the project version in CMakeLists.txt).
#pragma once

namespace gbc {
extern const char* const kGbcheckVersion;
}  // namespace gbc
