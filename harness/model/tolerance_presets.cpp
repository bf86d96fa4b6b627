#include "harness/model/tolerance_presets.h"

#include <cmath>

#include "compiler/ir/config_keys.h"

namespace gbc {
namespace {

const std::vector<ConfigKey<Tolerance>>& tolerance_keys() {
  static const std::vector<ConfigKey<Tolerance>> keys = {number_key("rtol", &Tolerance::rtol),
                                                         number_key("atol", &Tolerance::atol)};
  return keys;
}

// One key per floating dtype, a map of rtol and atol.
ConfigKey<TolerancePresets> dtype_key(DType dtype) {
  return {std::string(dtype_name(dtype)),
          [dtype](ConfigRead& in, const YAML::Node& v, const std::string& key, TolerancePresets& c) {
            read_config_keys(in, v, key + ".", tolerance_keys(), c[dtype]);
          },
          [dtype](const TolerancePresets& c) {
            auto it = c.find(dtype);
            return write_config_keys(tolerance_keys(), it == c.end() ? Tolerance{} : it->second);
          }};
}

std::vector<ConfigProblem> preset_problems(const TolerancePresets& c) {
  std::vector<ConfigProblem> out;
  for (const auto& [dtype, t] : c) {
    const std::string name(dtype_name(dtype));
    for (const auto& [field, v] : {std::pair<const char*, double>{"rtol", t.rtol}, {"atol", t.atol}})
      if (!std::isfinite(v) || v < 0)
        out.push_back({{name + "." + field, name}, name + "." + field + " must be a finite number >= 0, got " + config_number_text(v)});
  }
  return out;
}

const ConfigFormat<TolerancePresets>& presets_format() {
  static const ConfigFormat<TolerancePresets> format = [] {
    ConfigFormat<TolerancePresets> f{
        "tolerances config",
        "configs/tolerances.yaml holds rtol and atol of every floating dtype (docs/configs.md); a "
        "--tolerances-config file may leave keys out; integers and bool always compare exactly",
        {},
        [](ConfigRead& in, const TolerancePresets& c) { report_config_problems(in, "", preset_problems(c)); },
        "tolerances.yaml"};
    for (DType dtype : all_dtypes())
      if (is_floating(dtype)) f.keys.push_back(dtype_key(dtype));
    return f;
  }();
  return format;
}

}  // namespace

void read_tolerance_presets(const std::string& text, const std::string& path, bool complete, TolerancePresets& presets) {
  read_config(text, path, presets_format(), complete, presets);
}

TolerancePresets load_tolerance_presets(const std::string& override_path) {
  return load_config(presets_format(), override_path).config;
}

Tolerance default_tolerance(DType dtype) {
  if (!is_floating(dtype)) return {0.0, 0.0};
  return shipped_config(presets_format()).config.at(dtype);
}

}  // namespace gbc
