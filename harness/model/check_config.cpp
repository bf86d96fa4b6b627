#include "harness/model/check_config.h"

#include "harness/model/tolerance_presets.h"

namespace gbc {

Expectation Expectation::for_backend(const std::string& backend) const {
  Expectation e = *this;
  e.per_backend.clear();
  auto it = per_backend.find(backend);
  if (it == per_backend.end()) return e;
  const Expectation& o = it->second;
  if (o.graph_breaks) e.graph_breaks = o.graph_breaks;
  if (o.fallbacks) e.fallbacks = o.fallbacks;
  if (o.recompiles) e.recompiles = o.recompiles;
  if (o.min_speedup) e.min_speedup = o.min_speedup;
  return e;
}

Tolerance CheckConfig::tolerance_for(DType dtype, const std::string& output) const {
  if (auto it = output_tolerance.find(output); it != output_tolerance.end()) return it->second;
  return dtype_tolerance(dtype);
}

Tolerance CheckConfig::dtype_tolerance(DType dtype) const {
  if (auto it = tolerance.find(dtype); it != tolerance.end()) return it->second;
  if (auto it = tolerance_presets.find(dtype); it != tolerance_presets.end()) return it->second;
  return default_tolerance(dtype);
}

SourceLoc CheckConfig::loc_of(const std::string& key) const {
  auto it = key_locs.find(key);
  return it == key_locs.end() ? loc : it->second;
}

}  // namespace gbc
