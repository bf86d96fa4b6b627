#include "compiler/runtime/profile.h"

#include <algorithm>

namespace gbc {

void Profiler::add(const std::string& name, const std::string& kind, std::chrono::steady_clock::duration elapsed) {
  ProfileRow& row = rows_[name];
  if (row.calls == 0) {
    row.name = name;
    row.kind = kind;
  }
  ++row.calls;
  row.total_ms += std::chrono::duration<double, std::milli>(elapsed).count();
}

std::vector<ProfileRow> Profiler::rows() const {
  std::vector<ProfileRow> out;
  out.reserve(rows_.size());
  for (const auto& [name, row] : rows_) out.push_back(row);
  std::stable_sort(out.begin(), out.end(), [](const ProfileRow& a, const ProfileRow& b) { return a.total_ms > b.total_ms; });
  return out;
}

}  // namespace gbc
