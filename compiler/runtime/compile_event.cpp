#include "compiler/runtime/compile_event.h"

namespace gbc {

std::string CompileEvent::kind_name(Kind kind) {
  switch (kind) {
    case Kind::GraphBreak: return "graph break";
    case Kind::Fallback: return "fallback";
    case Kind::Recompile: return "recompile";
  }
  return "?";
}

void BackendStats::record(const CompileEvent& event) {
  for (const auto& e : events)
    if (e.kind == event.kind && e.code == event.code && e.loc.str() == event.loc.str() && e.message == event.message)
      return;
  events.push_back(event);
  switch (event.kind) {
    case CompileEvent::Kind::GraphBreak: ++graph_breaks; break;
    case CompileEvent::Kind::Fallback: ++fallbacks; break;
    case CompileEvent::Kind::Recompile: ++recompiles; break;
  }
}

}  // namespace gbc
