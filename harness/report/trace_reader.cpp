#include "harness/report/trace_reader.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "compiler/support/trace.h"

namespace gbc {

std::vector<const nlohmann::json*> Trace::all(const std::string& event) const {
  std::vector<const nlohmann::json*> out;
  for (const auto& e : events)
    if (e.value("event", "") == event) out.push_back(&e);
  return out;
}

Trace read_trace(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / trace::kFileName).string();
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": no trace here (write one with --trace " + dir + ")");
  Trace t;
  t.dir = dir;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("event")) {
      ++t.unreadable_lines;
      continue;
    }
    if (j["event"] == "trace_start" && j.value("schema", "") != trace::kSchema)
      throw std::runtime_error(path + ": schema " + j.value("schema", "?") + ", this gbcheck reads " + trace::kSchema);
    if (j["event"] == "trace_end") t.finished = true, t.exit_code = j.value("exit_code", -1);
    t.events.push_back(std::move(j));
  }
  if (t.all("trace_start").empty()) throw std::runtime_error(path + ": not a gbcheck trace (no trace_start event)");
  return t;
}

}  // namespace gbc
