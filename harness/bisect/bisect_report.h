// How `gbcheck bisect` shows its result: the terminal form (stage, pass, node with file:line, and
// the command that shows each) and --json (schema gbcheck.bisect/v1, docs/debugging.md).
// Test: tests/bisect/bisect_test.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "harness/bisect/bisect.h"

namespace gbc {

void print_bisect_result(const BisectResult& result, std::ostream& out);
nlohmann::json bisect_result_to_json(const BisectResult& result);

}  // namespace gbc
