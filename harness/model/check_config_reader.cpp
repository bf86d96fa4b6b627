#include "harness/model/check_config_reader.h"

#include <algorithm>

#include "compiler/ir/op_schema.h"

namespace gbc {
namespace {

class CheckReader {
 public:
  CheckReader(YamlReader& r, Model& m) : r_(r), m_(m), c_(m.check) {}

  void read(const YAML::Node& key, const YAML::Node& node) {
    c_.loc = r_.loc(key);
    if (node.IsNull()) return;
    if (!r_.expect_map(node, "check")) return;
    r_.check_keys(node, {"seed", "cases", "device", "backends", "tolerance", "equal_nan", "expect", "oracle",
                         "error_stat", "quantile", "fp64_multiplier", "dynamic", "cache_size_limit",
                         "capture_scalar_outputs", "reorderable_logging", "rewrite_if", "special_values", "layouts",
                         "recompile_sequence", "iterations"},
                  "check");
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      std::string k = it->first.Scalar();
      c_.key_locs[k] = r_.loc(it->second);
      read_key(k, it->second);
    }
  }

 private:
  void read_key(const std::string& k, const YAML::Node& v) {
    if (k == "seed") {
      if (auto x = r_.read_int(v, "check.seed")) {
        if (*x < 0) r_.error(v, "check.seed must be >= 0");
        else c_.seed = static_cast<uint64_t>(*x);
      }
    } else if (k == "cases") {
      if (auto x = r_.read_int(v, "check.cases")) {
        if (*x < 1 || *x > 1000000) r_.error(v, "check.cases must be between 1 and 1000000, got " + std::to_string(*x));
        else c_.cases = static_cast<int>(*x);
      }
    } else if (k == "device") {
      if (auto s = r_.read_string(v, "check.device")) {
        if (*s != "cpu" && *s != "cuda") r_.error(v, "check.device must be cpu or cuda, got '" + *s + "'");
        else c_.device = *s;
      }
    } else if (k == "backends") {
      if (auto l = r_.read_string_list(v, "check.backends")) c_.backends = *l;
    } else if (k == "tolerance") {
      read_tolerance(v);
    } else if (k == "equal_nan") {
      if (auto b = r_.read_bool(v, "check.equal_nan")) c_.equal_nan = *b;
    } else if (k == "expect") {
      read_expect(v);
    } else if (k == "oracle") {
      if (auto l = r_.read_string_list(v, "check.oracle")) c_.oracles = *l;
    } else if (k == "error_stat") {
      if (auto s = r_.read_string(v, "check.error_stat")) {
        if (*s != "elementwise" && *s != "max" && *s != "mean" && *s != "quantile")
          r_.error(v, "check.error_stat must be elementwise, max, mean or quantile, got '" + *s + "'");
        else c_.error_stat = *s;
      }
    } else if (k == "quantile") {
      if (auto x = r_.read_float(v, "check.quantile")) {
        if (*x <= 0 || *x > 1) r_.error(v, "check.quantile must be in (0, 1]");
        else c_.quantile = *x;
      }
    } else if (k == "fp64_multiplier") {
      if (auto x = r_.read_float(v, "check.fp64_multiplier")) {
        if (*x <= 0) r_.error(v, "check.fp64_multiplier must be positive");
        else c_.fp64_multiplier = *x;
      }
    } else if (k == "dynamic") {
      auto n = YamlReader::parse_number(v);
      if (n && n->kind == ScalarKind::Bool) c_.dynamic = n->b ? "true" : "false";
      else if (v.IsScalar() && v.Scalar() == "auto") c_.dynamic = "auto";
      else r_.error(v, "check.dynamic must be true, false or auto");
    } else if (k == "cache_size_limit") {
      if (auto x = r_.read_int(v, "check.cache_size_limit")) {
        if (*x < 1) r_.error(v, "check.cache_size_limit must be at least 1");
        else c_.cache_size_limit = static_cast<int>(*x);
      }
    } else if (k == "capture_scalar_outputs") {
      if (auto b = r_.read_bool(v, "check." + k)) c_.capture_scalar_outputs = *b;
    } else if (k == "reorderable_logging") {
      if (auto b = r_.read_bool(v, "check." + k)) c_.reorderable_logging = *b;
    } else if (k == "rewrite_if") {
      if (auto b = r_.read_bool(v, "check." + k)) c_.rewrite_if = *b;
    } else if (k == "recompile_sequence") {
      if (auto b = r_.read_bool(v, "check." + k)) c_.recompile_sequence = *b;
    } else if (k == "special_values") {
      if (auto x = r_.read_float(v, "check.special_values")) {
        if (*x < 0 || *x > 1) r_.error(v, "check.special_values is a rate and must be in [0, 1]");
        else c_.special_values = *x;
      }
    } else if (k == "layouts") {
      if (auto s = r_.read_string(v, "check.layouts")) {
        if (*s != "contiguous" && *s != "any") r_.error(v, "check.layouts must be contiguous or any, got '" + *s + "'");
        else c_.layouts = *s;
      }
    } else if (k == "iterations") {
      read_iterations(v);
    }
  }

  std::optional<Tolerance> read_rtol_atol(const YAML::Node& v, const std::string& what) {
    if (!r_.expect_map(v, what)) return std::nullopt;
    r_.check_keys(v, {"rtol", "atol"}, what);
    Tolerance t{0, 0};
    bool ok = true;
    for (const char* key : {"rtol", "atol"}) {
      if (!v[key]) continue;
      auto x = r_.read_float(v[key], what + "." + key);
      if (!x || *x < 0) {
        if (x) r_.error(v[key], what + "." + key + " must be >= 0");
        ok = false;
        continue;
      }
      (std::string(key) == "rtol" ? t.rtol : t.atol) = *x;
    }
    if (!ok) return std::nullopt;
    return t;
  }

  void read_tolerance(const YAML::Node& v) {
    if (!r_.expect_map(v, "check.tolerance")) return;
    for (auto it = v.begin(); it != v.end(); ++it) {
      std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
      std::string what = "check.tolerance." + name;
      if (auto dt = parse_dtype(name)) {
        if (auto t = read_rtol_atol(it->second, what)) c_.tolerance[*dt] = *t;
        continue;
      }
      bool is_output = false;
      for (ValueId o : m_.graph.outputs) is_output = is_output || m_.graph.name_of(o) == name;
      if (!is_output) {
        r_.error(it->first, "check.tolerance: '" + name + "' is neither a dtype nor an output",
                 "keys are dtypes (float32, ...) or output ids, each with {rtol, atol}");
        continue;
      }
      if (auto t = read_rtol_atol(it->second, what)) c_.output_tolerance[name] = *t;
    }
  }

  void read_expect(const YAML::Node& v) { read_expect_into(v, "check.expect", c_.expect, true); }

  // Keys that are not expectation names are backend names with their own expectations.
  void read_expect_into(const YAML::Node& v, const std::string& what, Expectation& out, bool allow_backends) {
    if (!r_.expect_map(v, what)) return;
    static const std::vector<std::string> keys = {"graph_breaks", "fallbacks", "recompiles", "min_speedup"};
    for (auto it = v.begin(); it != v.end(); ++it) {
      std::string k = it->first.IsScalar() ? it->first.Scalar() : "";
      const YAML::Node val = it->second;  // a copy: it-> yields a temporary proxy
      if (k == "min_speedup") {
        if (auto x = r_.read_float(val, what + ".min_speedup")) {
          if (*x <= 0) r_.error(val, what + ".min_speedup must be positive");
          else out.min_speedup = *x;
        }
      } else if (std::find(keys.begin(), keys.end(), k) != keys.end()) {
        auto x = r_.read_int(val, what + "." + k);
        if (!x) continue;
        if (*x < 0) { r_.error(val, what + "." + k + " must be >= 0"); continue; }
        (k == "graph_breaks" ? out.graph_breaks : k == "fallbacks" ? out.fallbacks : out.recompiles) = static_cast<int>(*x);
      } else if (allow_backends && val.IsMap()) {
        c_.key_locs["expect." + k] = r_.loc(it->first);  // the harness checks it names a backend
        read_expect_into(val, what + "." + k, out.per_backend[k], false);
      } else {
        std::string close = closest_name(k, keys);
        r_.error(it->first, what + ": unknown key '" + k + "'",
                 close.empty() ? "known keys: graph_breaks, fallbacks, recompiles, min_speedup, or a backend name "
                                 "with its own {fallbacks: ...}"
                               : "did you mean '" + close + "'?");
      }
    }
  }

  void read_iterations(const YAML::Node& v) {
    if (!r_.expect_map(v, "check.iterations")) return;
    r_.check_keys(v, {"steps", "feedback"}, "check.iterations");
    if (!v["steps"]) {
      r_.error(v, "check.iterations needs steps", "e.g. iterations: {steps: 10, feedback: {y: x}}");
      return;
    }
    auto steps = r_.read_int(v["steps"], "check.iterations.steps");
    if (!steps) return;
    if (*steps < 1 || *steps > 100000) {
      r_.error(v["steps"], "check.iterations.steps must be between 1 and 100000");
      return;
    }
    c_.iterations.steps = static_cast<int>(*steps);
    if (!v["feedback"]) return;
    const YAML::Node& fb = v["feedback"];
    if (!r_.expect_map(fb, "check.iterations.feedback")) return;
    const Graph& g = m_.graph;
    for (auto it = fb.begin(); it != fb.end(); ++it) {
      std::string out = it->first.IsScalar() ? it->first.Scalar() : "";
      std::string in = it->second.IsScalar() ? it->second.Scalar() : "";
      std::optional<ValueId> out_v;
      for (ValueId o : g.outputs)
        if (g.name_of(o) == out) out_v = o;
      const TensorSpec* in_spec = nullptr;
      for (const auto& s : m_.inputs)
        if (s.name == in) in_spec = &s;
      if (!out_v) { r_.error(it->first, "check.iterations.feedback: '" + out + "' is not an output"); continue; }
      if (!in_spec) { r_.error(it->second, "check.iterations.feedback: '" + in + "' is not an input"); continue; }
      const ValueType& ot = g.type(*out_v);
      const ValueType& it_type = g.type(in_spec->value);
      bool fits = ot.known() && ot.dtype == it_type.dtype && ot.rank() == it_type.rank();
      for (size_t i = 0; fits && i < ot.rank(); ++i) fits = g.dims.equal(ot.shape[i], it_type.shape[i]) == Truth::Always;
      if (ot.known() && !fits)
        r_.error(it->first, "check.iterations.feedback: output '" + out + "' (" + ot.str() + ") does not fit input '" + in +
                                "' (" + it_type.str() + ")",
                 "feedback needs the same dtype and shape");
      else
        c_.iterations.feedback.emplace_back(out, in);
    }
  }

  YamlReader& r_;
  Model& m_;
  CheckConfig& c_;
};

}  // namespace

void read_check_config(YamlReader& reader, const YAML::Node& key, const YAML::Node& node, Model& model) {
  CheckReader(reader, model).read(key, node);
}

}  // namespace gbc
