#include "harness/reduce/reduce_config.h"

#include <algorithm>

#include "compiler/ir/config_keys.h"
#include "compiler/ir/op_schema.h"
#include "harness/reduce/reducer.h"

namespace gbc {
namespace {

const ConfigFormat<ReduceConfig>& reduce_format() {
  using R = ReduceConfig;
  using V = ValueReduction;
  static const ConfigFormat<R> format = {
      "reduce config",
      "configs/reduce.yaml holds every key (docs/configs.md); a --reduce-config file may leave keys out",
      {name_list_key("schedule", &R::schedule),
       map_key("values", &R::values, {integer_key("small_tensor", &V::small_tensor), integer_key("max_parts", &V::max_parts)}),
       integer_key("replay_cases", &R::replay_cases)},
      [](ConfigRead& in, const R& c) { report_config_problems(in, "", reduce_config_problems(c)); },
      "reduce.yaml"};
  return format;
}

}  // namespace

std::vector<ConfigProblem> reduce_config_problems(const ReduceConfig& c) {
  std::vector<ConfigProblem> out;
  const std::vector<std::string>& passes = reduction_pass_names();
  std::string known;
  for (const auto& p : passes) known += (known.empty() ? "" : ", ") + p;
  if (c.schedule.empty()) out.push_back({{"schedule"}, "schedule names no pass (passes: " + known + ")"});
  for (size_t i = 0; i < c.schedule.size(); ++i) {
    const std::string& name = c.schedule[i];
    if (std::find(passes.begin(), passes.end(), name) != passes.end()) continue;
    std::string close = closest_name(name, passes);
    out.push_back({{"schedule." + std::to_string(i), "schedule"},
                   "schedule names unknown pass '" + name + "' (" + (close.empty() ? "" : "did you mean '" + close + "'? ") +
                       "passes: " + known + ")"});
  }
  if (c.values.small_tensor < 1)
    out.push_back({{"values.small_tensor"}, "values.small_tensor must be at least 1, got " + std::to_string(c.values.small_tensor)});
  if (c.values.max_parts < 1)
    out.push_back({{"values.max_parts"}, "values.max_parts must be at least 1, got " + std::to_string(c.values.max_parts)});
  if (c.replay_cases < 0 || c.replay_cases > 1000)
    out.push_back({{"replay_cases"}, "replay_cases must be in [0, 1000], got " + std::to_string(c.replay_cases)});
  return out;
}

void read_reduce_config(const std::string& text, const std::string& path, bool complete, ReduceConfig& config) {
  read_config(text, path, reduce_format(), complete, config);
}

ReduceConfig load_reduce_config(const std::string& override_path) {
  return load_config(reduce_format(), override_path).config;
}

}  // namespace gbc
