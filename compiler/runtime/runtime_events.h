// Recording a compile event (graph break, fallback, recompile) and logging it on its channel
// (graph_breaks, fallbacks, recompiles) the first time it happens, so every tier reports the same
// way and nothing is swallowed. Tests: tests/runtime/backends_test.cpp.
#pragma once

#include "compiler/runtime/compile_event.h"

namespace gbc {

/// Records into stats (once per kind, code, location and message) and logs it when it is new.
void report_event(BackendStats& stats, const CompileEvent& event);

/// "GB001 at model.yaml:12:5: print ... (hint: ...)", as logs and explain print an event.
std::string event_line(const CompileEvent& event);

}  // namespace gbc
