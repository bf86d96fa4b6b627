#include "compiler/runtime/runtime_events.h"

#include "compiler/support/log.h"
#include "compiler/support/trace.h"

namespace gbc {

std::string event_line(const CompileEvent& event) {
  std::string s = event.code;
  if (event.loc.valid()) s += " at " + event.loc.str();
  s += ": " + event.message;
  if (!event.hint.empty()) s += " (hint: " + event.hint + ")";
  return s;
}

void report_event(BackendStats& stats, const CompileEvent& event) {
  size_t before = stats.events.size();
  stats.record(event);
  if (stats.events.size() == before) return;
  if (trace::enabled()) {
    nlohmann::json loc = nullptr;
    if (event.loc.valid()) loc = {{"file", event.loc.file}, {"line", event.loc.line}, {"col", event.loc.col}, {"python", event.loc.origin}};
    trace::emit("compile_event", {{"kind", CompileEvent::kind_name(event.kind)}, {"code", event.code}, {"message", event.message},
                                  {"hint", event.hint}, {"op", event.op}, {"loc", loc}});
  }
  switch (event.kind) {
    case CompileEvent::Kind::GraphBreak: GBC_LOG_CHANNEL(graph_breaks) << "graph break " << event_line(event); break;
    case CompileEvent::Kind::Fallback: GBC_LOG_CHANNEL(fallbacks) << "fallback " << event_line(event); break;
    case CompileEvent::Kind::Recompile: GBC_LOG_CHANNEL(recompiles) << "recompile " << event_line(event); break;
  }
}

}  // namespace gbc
