#include "harness/cli/tolerance_args.h"

#include <cmath>
#include <map>
#include <optional>

#include "compiler/ir/dtype.h"
#include "harness/model/tolerance_presets.h"

namespace gbc {
namespace {

std::optional<double> parse_non_negative(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

// Sets one field (rtol or atol) from each `[WHERE:]X` of `specs`: bare values first, then dtypes,
// then outputs, so the most specific wins.
std::string apply_field(const std::vector<std::string>& specs, const char* flag, double Tolerance::*field, Model& model) {
  CheckConfig& c = model.check;
  std::map<std::string, DType> outputs;
  std::string output_list;
  for (ValueId id : model.graph.outputs) {
    outputs[model.graph.name_of(id)] = model.graph.value(id).type.dtype;
    output_list += (output_list.empty() ? "" : ", ") + model.graph.name_of(id);
  }
  std::optional<double> all;
  std::map<DType, double> by_dtype;
  std::map<std::string, double> by_output;
  for (const std::string& spec : specs) {
    const size_t colon = spec.rfind(':');
    const std::string where = colon == std::string::npos ? "" : spec.substr(0, colon);
    const std::optional<double> value = parse_non_negative(spec.substr(colon == std::string::npos ? 0 : colon + 1));
    if (!value) return std::string(flag) + " " + spec + ": expected a number >= 0, as X, DTYPE:X or OUTPUT:X";
    if (where.empty()) all = value;
    else if (outputs.count(where)) by_output[where] = *value;
    else if (std::optional<DType> dt = parse_dtype(where)) by_dtype[*dt] = *value;
    else return std::string(flag) + " " + spec + ": '" + where + "' is neither an output (" + output_list + ") nor a dtype";
  }
  if (all)
    for (DType dt : all_dtypes())
      if (is_floating(dt)) by_dtype.emplace(dt, *all);
  // The model's own per-output entries would win over a dtype given here: they take the value
  // for their dtype (or the bare one) unless the command line names the output itself.
  for (const auto& [name, t] : c.output_tolerance) {
    auto out = outputs.find(name);
    if (by_output.count(name) || out == outputs.end()) continue;
    if (auto d = by_dtype.find(out->second); d != by_dtype.end()) by_output[name] = d->second;
  }
  // Each entry starts from what the model would use, so that --rtol leaves atol as it was.
  for (const auto& [dt, v] : by_dtype) {
    Tolerance t = c.dtype_tolerance(dt);
    t.*field = v;
    c.tolerance[dt] = t;
  }
  for (const auto& [name, v] : by_output) {
    Tolerance t = c.tolerance_for(outputs.at(name), name);
    t.*field = v;
    c.output_tolerance[name] = t;
  }
  return "";
}

}  // namespace

std::string ToleranceArgs::apply(Model& model) const {
  // Read here, so that an invalid or missing file stops the command before anything runs.
  model.check.tolerance_presets = load_tolerance_presets(presets_path);
  if (std::string e = apply_field(rtol, "--rtol", &Tolerance::rtol, model); !e.empty()) return e;
  if (std::string e = apply_field(atol, "--atol", &Tolerance::atol, model); !e.empty()) return e;
  if (error_stat.empty()) return "";
  const size_t colon = error_stat.find(':');
  const std::string stat = error_stat.substr(0, colon);
  if (stat != "elementwise" && stat != "max" && stat != "mean" && stat != "quantile")
    return "--error-stat " + error_stat + ": expected elementwise, max, mean, quantile or quantile:Q";
  if (colon != std::string::npos) {
    std::optional<double> q = stat == "quantile" ? parse_non_negative(error_stat.substr(colon + 1)) : std::nullopt;
    if (!q || *q <= 0 || *q > 1) return "--error-stat " + error_stat + ": Q of quantile:Q is in (0, 1], e.g. quantile:0.99";
    model.check.quantile = *q;
  }
  model.check.error_stat = stat;
  return "";
}

}  // namespace gbc
