#include "harness/model/model_loader.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <map>
#include <set>

#include "compiler/ir/generic_op.h"
#include "compiler/ir/infer.h"
#include "compiler/ir/op_schema.h"
#include "compiler/ir/yaml_reader.h"
#include "harness/model/check_config_reader.h"
#include "harness/model/weights_file.h"

namespace gbc {
namespace {

constexpr const char* kFormat = "gbcheck/v1";

class ModelLoader {
 public:
  ModelLoader(const std::string& path) : r_(path, diags_) { model_.path = path; }

  Model load(const std::string& text) {
    std::optional<YAML::Node> parsed = r_.parse(text);
    if (!parsed) throw ModelError(diags_);
    YAML::Node root = *parsed;
    if (!root.IsMap()) {
      diags_.error(SourceLoc{r_.file(), 1, 1}, "a model must be a YAML map with format, inputs, graph and outputs",
                   "start from corpus/examples/mlp.yaml");
      throw ModelError(diags_);
    }
    r_.check_keys(root, {"format", "name", "dims", "inputs", "params", "graph", "outputs", "check"}, "model");
    read_format(root);
    model_.name = root["name"] && root["name"].IsScalar() ? root["name"].Scalar() : stem(r_.file());
    model_.graph.name = model_.name;
    scopes_.emplace_back();
    if (root["dims"]) read_dims(root["dims"]);
    if (root["inputs"]) read_tensors(root["inputs"], false);
    if (root["params"]) read_tensors(root["params"], true);
    if (!root["graph"]) {
      diags_.error(SourceLoc{r_.file(), 1, 1}, "model has no graph", "add graph: with a list of nodes");
    } else if (r_.expect_sequence(root["graph"], "graph")) {
      collect_ids(root["graph"]);
      read_block(root["graph"], model_.graph.body);
    }
    read_outputs(root);
    if (!diags_.has_errors()) check_dtype_variants();
    if (root["check"]) read_check_config(r_, r_.key_node(root, "check"), root["check"], model_);
    if (diags_.has_errors()) {
      diags_.sort_by_location();
      throw ModelError(diags_);
    }
    return std::move(model_);
  }

 private:
  static std::string stem(const std::string& path) {
    std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
    return base.substr(0, base.find('.'));
  }

  void read_format(const YAML::Node& root) {
    if (!root["format"]) {
      diags_.error(SourceLoc{r_.file(), 1, 1}, "missing format", std::string("the first line should be `format: ") + kFormat + "`");
      return;
    }
    if (!root["format"].IsScalar() || root["format"].Scalar() != kFormat)
      r_.error(root["format"], "unsupported format '" + (root["format"].IsScalar() ? root["format"].Scalar() : "") + "'",
               std::string("this gbcheck reads `format: ") + kFormat + "`");
  }

  // dims: {B: [1, 32], D: 64}
  void read_dims(const YAML::Node& node) {
    if (node.IsNull() || !r_.expect_map(node, "dims")) return;
    for (auto it = node.begin(); it != node.end(); ++it) {
      std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
      if (!YamlReader::is_identifier(name)) {
        r_.error(it->first, "dim name '" + name + "' is not an identifier", "use letters, digits and _ (e.g. B, seq_len)");
        continue;
      }
      if (model_.graph.dims.has(name)) {
        r_.error(it->first, "dim '" + name + "' is declared twice");
        continue;
      }
      DimRange range;
      const YAML::Node v = it->second;  // a copy: it-> yields a temporary proxy
      if (v.IsSequence()) {
        auto l = r_.read_int_list(v, "dim " + name);
        if (!l) continue;
        if (l->size() != 2) {
          r_.error(v, "dim " + name + " range must be [min, max], got " + std::to_string(l->size()) + " numbers");
          continue;
        }
        range = {(*l)[0], (*l)[1]};
      } else {
        auto x = r_.read_int(v, "dim " + name);
        if (!x) continue;
        range = {*x, *x};
      }
      if (range.min < 0 || range.max < range.min) {
        r_.error(v, "dim " + name + " range [" + std::to_string(range.min) + ", " + std::to_string(range.max) + "] is empty or negative",
                 "write [min, max] with 0 <= min <= max");
        continue;
      }
      if (range.max > (int64_t{1} << 32)) {
        r_.error(v, "dim " + name + " maximum " + std::to_string(range.max) + " is too large");
        continue;
      }
      model_.graph.dims.declare(name, range);
      declared_dims_.insert(name);
    }
  }

  std::optional<SymShape> read_shape(const YAML::Node& node, const std::string& what, bool allow_minus_one) {
    if (!r_.expect_sequence(node, what)) return std::nullopt;
    SymShape shape;
    bool ok = true;
    for (const auto& item : node) {
      auto n = YamlReader::parse_number(item);
      if (n && n->kind == ScalarKind::Int) {
        if (n->i < 0 && !(allow_minus_one && n->i == -1)) {
          r_.error(item, what + ": size " + std::to_string(n->i) + " is negative");
          ok = false;
        }
        shape.push_back(n->i);
      } else if (item.IsScalar() && YamlReader::is_identifier(item.Scalar())) {
        if (!model_.graph.dims.has(item.Scalar())) {
          std::vector<std::string> names;
          for (const auto& [d, range] : model_.graph.dims.ranges()) names.push_back(d);
          std::string close = closest_name(item.Scalar(), names);
          r_.error(item, what + ": dim '" + item.Scalar() + "' is not declared",
                   close.empty() ? "declare it under dims:, e.g. dims: {" + item.Scalar() + ": [1, 16]}"
                                 : "did you mean '" + close + "'?");
          ok = false;
        }
        shape.push_back(DimExpr::symbol(item.Scalar()));
      } else {
        r_.error(item, what + ": entries must be sizes or dim names");
        ok = false;
      }
    }
    if (!ok) return std::nullopt;
    return shape;
  }

  void read_tensors(const YAML::Node& node, bool params) {
    const std::string section = params ? "params" : "inputs";
    if (node.IsNull() || !r_.expect_map(node, section)) return;
    for (auto it = node.begin(); it != node.end(); ++it) {
      std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
      const YAML::Node spec = it->second;  // a copy: it-> yields a temporary proxy
      if (!YamlReader::is_identifier(name)) {
        r_.error(it->first, "'" + name + "' is not a valid name", "names are identifiers: letters, digits and _");
        continue;
      }
      if (auto prev = lookup(name)) {
        r_.error(it->first, "'" + name + "' is already defined at " + model_.graph.value(*prev).loc.str());
        continue;
      }
      if (!r_.expect_map(spec, section + "." + name)) continue;
      r_.check_keys(spec, {"shape", "dtype", "dtypes", "values"}, section + "." + name);
      TensorSpec t;
      t.name = name;
      t.loc = r_.loc(it->first);
      t.is_param = params;
      bool ok = true;
      if (!spec["shape"]) {
        r_.error(spec, section + "." + name + " has no shape", "e.g. shape: [B, 64] (use [] for a 0-d tensor)");
        ok = false;
      } else if (auto s = read_shape(spec["shape"], section + "." + name + ".shape", false)) {
        t.shape = *s;
        if (!params)
          for (const auto& d : t.shape) d.collect_symbols(input_dims_);
      } else {
        ok = false;
      }
      if (spec["dtype"]) {
        auto s = r_.read_string(spec["dtype"], "dtype");
        auto dt = s ? parse_dtype(*s) : std::nullopt;
        if (!dt && s) {
          r_.error(spec["dtype"], "unknown dtype '" + *s + "'",
                   "one of float64 float32 float16 bfloat16 int64 int32 int16 int8 uint8 bool");
        }
        if (dt) t.dtype = *dt;
        else ok = false;
      }
      if (spec["dtypes"] && ok) ok = read_dtypes(spec["dtypes"], t, section + "." + name, spec["dtype"].IsDefined());
      t.dist = ValueDist::default_for(t.dtype);
      if (spec["values"] && ok) ok = read_dist(spec["values"], t);
      ValueType type = ok ? ValueType::tensor(t.dtype, t.shape) : ValueType{};
      t.value = model_.graph.add_value(name, type, t.loc);
      model_.graph.inputs.push_back({t.value, params ? GraphInput::Role::Param : GraphInput::Role::Input});
      scopes_.back()[name] = t.value;
      (params ? model_.params : model_.inputs).push_back(t);
    }
  }

  // `dtypes: [float32, float64]`: one family (floating, or integer), distinct, the first being
  // `dtype` (which it sets when `dtype` is left out). Inputs only.
  bool read_dtypes(const YAML::Node& v, TensorSpec& t, const std::string& what, bool dtype_given) {
    const std::string key = what + ".dtypes";
    if (t.is_param) {
      r_.error(v, key + ": params have one dtype", "list other dtypes on an input");
      return false;
    }
    auto names = r_.read_string_list(v, key);
    if (!names) return false;
    if (names->size() < 2) {
      r_.error(v, key + " needs two dtypes or more", "e.g. dtypes: [float32, float64]; one dtype is dtype:");
      return false;
    }
    std::vector<DType> list;
    for (const std::string& n : *names) {
      auto dt = parse_dtype(n);
      if (!dt) {
        r_.error(v, key + ": unknown dtype '" + n + "'", "one of float64 float32 float16 bfloat16 int64 int32 int16 int8 uint8");
        return false;
      }
      if (std::find(list.begin(), list.end(), *dt) != list.end()) {
        r_.error(v, key + ": " + n + " is listed twice");
        return false;
      }
      list.push_back(*dt);
    }
    for (DType dt : list) {
      const bool same_family = dt != DType::Bool && list[0] != DType::Bool && is_floating(dt) == is_floating(list[0]);
      if (!same_family) {
        r_.error(v, key + ": " + std::string(dtype_name(list[0])) + " and " + std::string(dtype_name(dt)) + " are not one family",
                 "list floating dtypes only, or integer dtypes only (values are drawn the same way for each)");
        return false;
      }
    }
    if (dtype_given && list[0] != t.dtype) {
      r_.error(v, key + " must begin with its dtype (" + std::string(dtype_name(t.dtype)) + ")",
               "the first entry is the dtype the model declares and case 0 passes");
      return false;
    }
    t.dtype = list[0];
    t.dtypes = std::move(list);
    t.dtypes_loc = r_.loc(v);
    return true;
  }

  // Every dtype variant must type-check: entry k of the inputs' lists go together.
  void check_dtype_variants() {
    const TensorSpec* first = nullptr;
    for (const TensorSpec& s : model_.inputs) {
      if (s.dtypes.empty()) continue;
      if (first && s.dtypes.size() != first->dtypes.size()) {
        diags_.error(s.dtypes_loc,
                     "inputs." + s.name + ".dtypes has " + std::to_string(s.dtypes.size()) + " entries, inputs." +
                         first->name + ".dtypes " + std::to_string(first->dtypes.size()),
                     "entry k of every input's dtypes is passed together: give every list the same length");
        return;
      }
      if (!first) first = &s;
    }
    for (int64_t k = 1; first && k < model_.dtype_variants(); ++k) {
      Graph g;
      Diagnostics d;
      if (model_.graph_for_variant(k, g, d)) continue;
      std::string call;
      for (const TensorSpec& s : model_.inputs)
        if (!s.dtypes.empty()) call += (call.empty() ? "" : ", ") + s.name + " " + std::string(dtype_name(s.dtype_in(k)));
      const std::string why = d.all().empty() ? "a node rejects them" : d.all()[0].message;
      diags_.error(first->dtypes_loc, "the graph does not accept dtype variant " + std::to_string(k) + " (" + call + "): " + why,
                   "drop that entry from the dtypes lists, or cast in the graph with to");
    }
  }

  bool read_dist(const YAML::Node& v, TensorSpec& t) {
    std::string what = t.name + ".values";
    if (!r_.expect_map(v, what)) return false;
    if (v["file"]) return read_weights(v, t);
    if (!v["dist"]) {
      r_.error(v, what + " needs dist", "one of normal, uniform, int, bernoulli, const");
      return false;
    }
    auto dist = r_.read_string(v["dist"], what + ".dist");
    if (!dist) return false;
    ValueDist d;
    d.explicit_in_model = true;
    auto num = [&](const char* key, double fallback, bool required = false) -> std::optional<double> {
      if (!v[key]) {
        if (required) {
          r_.error(v, what + ": dist " + *dist + " needs " + key);
          return std::nullopt;
        }
        return fallback;
      }
      return r_.read_float(v[key], what + "." + key);
    };
    const bool floating = is_floating(t.dtype);
    std::optional<double> a, b;
    if (*dist == "normal") {
      r_.check_keys(v, {"dist", "mean", "std"}, what);
      d.kind = ValueDist::Kind::Normal;
      a = num("mean", 0.0);
      b = num("std", 1.0);
      if (!floating) {
        r_.error(v["dist"], what + ": dist normal needs a floating dtype, " + t.name + " is " + std::string(dtype_name(t.dtype)),
                 "use {dist: int, low: .., high: ..} for integers or {dist: bernoulli, p: ..} for bool");
        return false;
      }
      if (b && *b <= 0) { r_.error(v["std"], what + ".std must be positive"); return false; }
    } else if (*dist == "uniform") {
      r_.check_keys(v, {"dist", "low", "high"}, what);
      d.kind = ValueDist::Kind::Uniform;
      a = num("low", 0.0);
      b = num("high", 1.0);
      if (!floating) {
        r_.error(v["dist"], what + ": dist uniform needs a floating dtype", "use {dist: int, low: .., high: ..} for integers");
        return false;
      }
      if (a && b && !(*a < *b)) {
        r_.error(v, what + ": low (" + std::to_string(*a) + ") must be below high (" + std::to_string(*b) + ")",
                 "high defaults to 1.0; give both");
        return false;
      }
    } else if (*dist == "int") {
      r_.check_keys(v, {"dist", "low", "high"}, what);
      d.kind = ValueDist::Kind::Int;
      ValueDist def = ValueDist::default_for(t.dtype);
      a = num("low", def.kind == ValueDist::Kind::Int ? def.a : -10);
      b = num("high", def.kind == ValueDist::Kind::Int ? def.b : 10);
      if (a && b && *a > *b) { r_.error(v, what + ": low must not exceed high"); return false; }
      if (a && b && t.dtype != DType::Bool && !floating) {
        auto [lo, hi] = integer_range(t.dtype);
        if (*a < lo || *b > hi) {
          r_.error(v, what + ": [" + std::to_string(static_cast<long long>(*a)) + ", " +
                          std::to_string(static_cast<long long>(*b)) + "] does not fit " + std::string(dtype_name(t.dtype)));
          return false;
        }
      }
      if (t.dtype == DType::Bool) {
        r_.error(v["dist"], what + ": bool tensors use {dist: bernoulli, p: ...}");
        return false;
      }
    } else if (*dist == "bernoulli") {
      r_.check_keys(v, {"dist", "p"}, what);
      d.kind = ValueDist::Kind::Bernoulli;
      a = num("p", 0.5);
      if (a && (*a < 0 || *a > 1)) { r_.error(v["p"], what + ".p must be in [0, 1]"); return false; }
      b = 0.0;
    } else if (*dist == "const") {
      r_.check_keys(v, {"dist", "value"}, what);
      d.kind = ValueDist::Kind::Const;
      a = num("value", 0.0, true);
      b = 0.0;
    } else {
      r_.error(v["dist"], what + ": unknown dist '" + *dist + "'", "one of normal, uniform, int, bernoulli, const");
      return false;
    }
    if (!a || !b) return false;
    d.a = *a;
    d.b = *b;
    t.dist = d;
    return true;
  }

  // values: {file: weights.safetensors, tensor: NAME}: the file is relative to the model's folder.
  bool read_weights(const YAML::Node& v, TensorSpec& t) {
    const std::string what = t.name + ".values";
    r_.check_keys(v, {"file", "tensor"}, what);
    if (!t.is_param) {
      r_.error(v["file"], what + ": values from a weights file are for params", "inputs are drawn for every case");
      return false;
    }
    auto file = r_.read_string(v["file"], what + ".file");
    if (!file) return false;
    if (!v["tensor"]) {
      r_.error(v, what + " needs tensor: the name in " + *file);
      return false;
    }
    auto tensor = r_.read_string(v["tensor"], what + ".tensor");
    if (!tensor) return false;
    const std::string& model_path = r_.file();
    const size_t slash = model_path.find_last_of('/');
    const std::string path = (*file)[0] == '/' || slash == std::string::npos ? *file : model_path.substr(0, slash + 1) + *file;
    auto cached = weights_files_.find(path);
    if (cached == weights_files_.end()) {
      std::string why;
      cached = weights_files_.emplace(path, read_weights_file(path, &why)).first;
      weights_errors_[path] = why;
    }
    if (!cached->second) {
      r_.error(v["file"], what + ": " + weights_errors_[path], "write it again with gbcheck import");
      return false;
    }
    const WeightsFile& wf = *cached->second;
    auto entry = wf.tensors.find(*tensor);
    if (entry == wf.tensors.end()) {
      std::vector<std::string> names;
      for (const auto& [n, e] : wf.tensors) names.push_back(n);
      std::string close = closest_name(*tensor, names);
      r_.error(v["tensor"], what + ": " + *file + " has no tensor '" + *tensor + "'",
               close.empty() ? "" : "did you mean '" + close + "'?");
      return false;
    }
    const WeightsEntry& e = entry->second;
    SymShape shape(e.shape.begin(), e.shape.end());
    bool same_shape = shape.size() == t.shape.size();
    for (size_t i = 0; same_shape && i < shape.size(); ++i) same_shape = t.shape[i].is_const() && t.shape[i].value() == e.shape[i];
    if (!same_shape || e.dtype != t.dtype) {
      r_.error(v["tensor"], what + ": tensor '" + *tensor + "' in " + *file + " is " +
                                ValueType::tensor(e.dtype, shape).str() + ", the param is " +
                                ValueType::tensor(t.dtype, t.shape).str());
      return false;
    }
    t.weights = WeightValues{*file, *tensor, wf.bytes, e.offset, e.size};
    return true;
  }

  static std::pair<double, double> integer_range(DType dt) {
    switch (dt) {
      case DType::UInt8: return {0, 255};
      case DType::Int8: return {-128, 127};
      case DType::Int16: return {-32768, 32767};
      case DType::Int32: return {-2147483648.0, 2147483647.0};
      default: return {-9.2e18, 9.2e18};
    }
  }

  // Every id defined anywhere in the file, for "used before it is defined" errors.
  void collect_ids(const YAML::Node& seq) {
    if (!seq.IsSequence()) return;
    for (const auto& n : seq) {
      if (!n.IsMap()) continue;
      for (const char* key : {"id", "result"})
        if (n[key] && n[key].IsScalar() && !(key == std::string("id") && n["result"]))  // an if's id names nothing
          all_ids_.emplace(n[key].Scalar(), r_.loc(n[key]));
      if (n["then"]) collect_ids(n["then"]);
      if (n["else"]) collect_ids(n["else"]);
    }
  }

  std::optional<ValueId> lookup(const std::string& name) const {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
      if (auto it = s->find(name); it != s->end()) return it->second;
    return std::nullopt;
  }

  std::vector<std::string> visible_names() const {
    std::vector<std::string> names;
    for (const auto& s : scopes_)
      for (const auto& [n, v] : s) names.push_back(n);
    return names;
  }

  void read_block(const YAML::Node& seq, Block& block) {
    for (const auto& item : seq) read_node(item, block);
  }

  std::optional<Arg> read_arg(const YAML::Node& item, const std::string& op) {
    if (auto n = YamlReader::parse_number(item)) return Arg::number(*n);
    if (!item.IsScalar()) {
      r_.error(item, op + ": args must be ids or numbers, got a " + std::string(item.IsMap() ? "map" : "list"),
               "nested nodes are not allowed in args; give the inner node its own id");
      return std::nullopt;
    }
    const std::string& name = item.Scalar();
    if (auto v = lookup(name)) return Arg::of(*v);
    auto later = all_ids_.find(name);
    SourceLoc here = r_.loc(item);
    if (later != all_ids_.end() && (later->second.line < here.line ||
                                    (later->second.line == here.line && later->second.col < here.col))) {
      r_.error(item, op + ": '" + name + "' is local to an if branch (defined at " + later->second.str() + ")",
               "only the if's result is visible after it; compute '" + name + "' before the if, or make it the result");
    } else if (later != all_ids_.end()) {
      r_.error(item, op + ": '" + name + "' is used before it is defined (at " + later->second.str() + ")",
               "nodes run in order: move this node after the one that defines '" + name + "'");
    } else {
      std::string close = closest_name(name, visible_names());
      if (model_.graph.dims.has(name)) {
        r_.error(item, op + ": '" + name + "' is a dim, not a value",
                 "args take values and numbers; sizes of dims are not available as numbers in format v1");
        return std::nullopt;
      }
      r_.error(item, op + ": '" + name + "' is not defined",
               close.empty() ? "args name inputs, params or ids of earlier nodes" : "did you mean '" + close + "'?");
    }
    return std::nullopt;
  }

  std::optional<AttrValue> read_attr(const AttrSpec& spec, const YAML::Node& v, const std::string& op) {
    std::string what = op + "." + spec.name;
    switch (spec.type) {
      case AttrType::Bool: {
        auto b = r_.read_bool(v, what);
        if (b) return AttrValue(*b);
        return std::nullopt;
      }
      case AttrType::Int: {
        auto i = r_.read_int(v, what);
        if (i) return AttrValue(*i);
        return std::nullopt;
      }
      case AttrType::Float: {
        auto f = r_.read_float(v, what);
        if (f) return AttrValue(*f);
        return std::nullopt;
      }
      case AttrType::Number: {
        auto n = YamlReader::parse_number(v);
        if (n) return AttrValue(*n);
        r_.error(v, what + " must be a number");
        return std::nullopt;
      }
      case AttrType::String: {
        auto s = r_.read_string(v, what);
        if (!s) return std::nullopt;
        if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), *s) == spec.choices.end()) {
          std::string list;
          for (const auto& c : spec.choices) list += (list.empty() ? "" : ", ") + c;
          r_.error(v, what + ": '" + *s + "' is not one of " + list);
          return std::nullopt;
        }
        return AttrValue(*s);
      }
      case AttrType::IntList: {
        if (v.IsScalar()) {
          auto i = r_.read_int(v, what);
          if (i) return AttrValue(*i);
          return std::nullopt;
        }
        auto l = r_.read_int_list(v, what);
        if (l) return AttrValue(*l);
        return std::nullopt;
      }
      case AttrType::Stride2: {
        auto l = r_.read_int_list(v, what);
        if (!l) return std::nullopt;
        if (l->size() != 1 && l->size() != 2) {
          r_.error(v, what + " must be an int or a list of two ints");
          return std::nullopt;
        }
        return AttrValue(*l);
      }
      case AttrType::Shape: {
        if (v.IsScalar()) {
          auto i = r_.read_int(v, what);
          if (i) return AttrValue(SymShape{*i});
          return std::nullopt;
        }
        auto s = read_shape(v, what, true);
        if (!s) return std::nullopt;
        // A dim's value at run time comes from the inputs' sizes: one no input has is unknown.
        std::set<std::string> symbols;
        for (const auto& d : *s) d.collect_symbols(symbols);
        for (const auto& sym : symbols) {
          if (input_dims_.count(sym) || !declared_dims_.count(sym)) continue;  // nonzero's dims bind at run time
          r_.error(v, what + ": dim '" + sym + "' is the size of no input, so its value is unknown when the graph runs",
                   "use " + sym + " in an input's shape, or write a number");
          return std::nullopt;
        }
        return AttrValue(*s);
      }
      case AttrType::DType: {
        auto s = r_.read_string(v, what);
        if (!s) return std::nullopt;
        if (auto d = parse_dtype(*s)) return AttrValue(*d);
        r_.error(v, what + ": unknown dtype '" + *s + "'", "one of float64 float32 float16 bfloat16 int64 int32 int16 int8 uint8 bool");
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  void define(const std::string& name, ValueId v) { scopes_.back()[name] = v; }

  // A generic op's non-tensor arguments, by their schema names: numbers, strings, lists of
  // numbers, and null for None. The typer checks them against the schema.
  void read_generic_attrs(const YAML::Node& v, Node& node) {
    if (!r_.expect_map(v, "aten.attrs")) return;
    for (auto it = v.begin(); it != v.end(); ++it) {
      std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
      const YAML::Node value = it->second;
      std::string what = "aten.attrs." + name;
      if (!YamlReader::is_identifier(name) || name == kGenericSchemaAttr) {
        r_.error(it->first, "'" + name + "' cannot name an argument", "attrs: holds the schema's argument names");
        continue;
      }
      if (value.IsNull()) {
        node.attrs[name] = NoneAttr{};
      } else if (value.IsScalar()) {
        auto n = YamlReader::parse_number(value);
        if (n && n->kind == ScalarKind::Int) node.attrs[name] = n->i;
        else if (n && n->kind == ScalarKind::Float) node.attrs[name] = n->f;
        else if (n) node.attrs[name] = n->b;
        else node.attrs[name] = value.Scalar();
      } else if (value.IsSequence()) {
        std::vector<int64_t> ints;
        std::vector<double> floats;
        bool all_int = true, ok = true;
        for (const auto& item : value) {
          auto n = YamlReader::parse_number(item);
          if (!n || n->kind == ScalarKind::Bool) {
            r_.error(item, what + ": list entries must be numbers");
            ok = false;
            break;
          }
          if (n->kind == ScalarKind::Float) all_int = false;
          ints.push_back(n->to_int());
          floats.push_back(n->to_double());
        }
        if (!ok) continue;
        if (all_int) node.attrs[name] = ints;
        else node.attrs[name] = floats;
      } else {
        r_.error(value, what + " must be a number, a string, a list of numbers or null");
      }
    }
  }

  void read_node(const YAML::Node& yn, Block& block) {
    if (!r_.expect_map(yn, "a graph node")) return;
    Node node;
    node.loc = r_.loc(yn);
    if (!yn["op"]) {
      r_.error(yn, "node has no op", "each node is {id: name, op: opname, args: [...]}");
      define_unknown(yn);
      return;
    }
    auto op = r_.read_string(yn["op"], "op");
    if (!op) return define_unknown(yn);
    const OpSchema* schema = find_op_schema(*op);
    if (!schema) {
      std::string close = closest_op_name(*op);
      r_.error(yn["op"], "unknown op '" + *op + "'",
               close.empty() ? "see docs/model-format.md for the list of ops" : "did you mean '" + close + "'?");
      return define_unknown(yn);
    }
    node.op = *op;
    const bool generic = node.op == kGenericOp;
    std::vector<std::string> keys = {"id", "op", "args", "source"};
    for (const auto& a : schema->attrs) keys.push_back(a.name);
    if (generic) keys.push_back("attrs");
    if (schema->cls == OpClass::Control) {
      keys.push_back("then");
      keys.push_back("else");
    }
    size_t errors_before = diags_.error_count();
    r_.check_keys(yn, keys, *op);
    if (schema->cls == OpClass::Control && yn["id"]) {
      const std::string result = yn["result"] && yn["result"].IsScalar() ? yn["result"].Scalar() : "";
      r_.error(yn["id"], *op + ": an if has no id: it is named by its result" + (result.empty() ? "" : " ('" + result + "')"),
               "drop the id and use the result's name after the if");
    }

    // args
    bool args_ok = true;
    std::vector<std::string> arg_names;
    if (yn["args"]) {
      const YAML::Node& args = yn["args"];
      if (args.IsScalar() && !args.IsNull()) {
        if (auto a = read_arg(args, *op)) node.args.push_back(*a);
        else args_ok = false;
        arg_names.push_back(args.Scalar());
      } else if (r_.expect_sequence(args, *op + ": args")) {
        for (const auto& item : args) {
          if (auto a = read_arg(item, *op)) node.args.push_back(*a);
          else args_ok = false;
          arg_names.push_back(item.IsScalar() ? item.Scalar() : "");
        }
      } else {
        args_ok = false;
      }
    }
    size_t nargs = yn["args"] ? (yn["args"].IsSequence() ? yn["args"].size() : 1) : 0;
    if (args_ok && (static_cast<int>(nargs) < schema->min_args || (schema->max_args >= 0 && static_cast<int>(nargs) > schema->max_args))) {
      std::string expected = schema->min_args == schema->max_args ? std::to_string(schema->min_args)
                             : schema->max_args < 0 ? "at least " + std::to_string(schema->min_args)
                                                    : std::to_string(schema->min_args) + " to " + std::to_string(schema->max_args);
      r_.error(yn["args"] ? yn["args"] : yn, *op + " takes " + expected + " args, got " + std::to_string(nargs),
               "signature: " + schema->signature);
      args_ok = false;
    }

    // attributes
    for (const auto& spec : schema->attrs) {
      if (!yn[spec.name]) {
        if (spec.required) r_.error(yn, *op + ": missing attribute '" + spec.name + "'", "signature: " + schema->signature);
        continue;
      }
      if (auto v = read_attr(spec, yn[spec.name], *op)) node.attrs[spec.name] = *v;
    }
    if (generic && yn["attrs"]) read_generic_attrs(yn["attrs"], node);
    if (yn["source"]) {
      if (auto s = r_.read_string(yn["source"], "source")) node.loc.origin = *s;
    }

    // id and outputs
    std::string id;
    std::vector<std::string> extra_ids;  // a generic op's further results: id: [values, indices]
    if (generic && yn["id"] && yn["id"].IsSequence()) {
      std::vector<std::string> ids;
      for (const auto& item : yn["id"]) {
        auto s = r_.read_string(item, "id");
        if (!s || !YamlReader::is_identifier(*s)) {
          r_.error(item, "id '" + (s ? *s : std::string()) + "' is not an identifier");
          continue;
        }
        if (auto prev = lookup(*s)) {
          r_.error(item, "id '" + *s + "' is already defined at " + model_.graph.value(*prev).loc.str());
          continue;
        }
        ids.push_back(*s);
      }
      if (!ids.empty()) {
        id = ids[0];
        extra_ids.assign(ids.begin() + 1, ids.end());
      }
    } else if (yn["id"]) {
      auto s = r_.read_string(yn["id"], "id");
      if (s) id = *s;
      if (!schema->produces_value) {
        r_.error(yn["id"], *op + " produces no value, so it takes no id", "remove `id:`");
        id.clear();
      } else if (!YamlReader::is_identifier(id)) {
        r_.error(yn["id"], "id '" + id + "' is not an identifier", "use letters, digits and _, not starting with a digit");
        id.clear();
      } else if (auto prev = lookup(id)) {
        r_.error(yn["id"], "id '" + id + "' is already defined at " + model_.graph.value(*prev).loc.str(),
                 "each id is defined once; in-place ops rebind their self argument's name");
        id.clear();
      }
    } else if (schema->produces_value && schema->cls != OpClass::Control && schema->cls != OpClass::InPlace) {
      r_.error(yn, *op + " produces a value but has no id", "add id: name so later nodes and outputs can use it");
    }

    if (schema->cls == OpClass::Control) {
      read_if(yn, node);
      if (auto r = node.attr("result"); r && std::holds_alternative<std::string>(*r)) id = std::get<std::string>(*r);
    }

    bool ok = args_ok && diags_.error_count() == errors_before;
    std::string out_name = id;
    if (schema->cls == OpClass::InPlace && out_name.empty() && !arg_names.empty())
      out_name = model_.graph.fresh_name(arg_names[0] + ".mut");
    if (schema->produces_value && !out_name.empty()) {
      ValueId out = model_.graph.add_value(out_name, ValueType{}, node.loc);
      node.outputs.push_back(out);
      for (const auto& extra : extra_ids) node.outputs.push_back(model_.graph.add_value(extra, ValueType{}, node.loc));
    }
    if (ok) infer_node_types(model_.graph, node, diags_);
    if (!node.outputs.empty()) {
      if (!id.empty()) define(id, node.outputs[0]);
      for (size_t i = 0; i < extra_ids.size(); ++i) define(extra_ids[i], node.outputs[i + 1]);
      // An in-place op rebinds its self argument: later uses see the mutated tensor.
      if (schema->cls == OpClass::InPlace && !arg_names.empty() && lookup(arg_names[0]))
        define_in_owner_scope(arg_names[0], node.outputs[0]);
    }
    block.nodes.push_back(std::move(node));
  }

  void define_in_owner_scope(const std::string& name, ValueId v) {
    for (auto s = scopes_.rbegin(); s != scopes_.rend(); ++s)
      if (s->count(name)) {
        (*s)[name] = v;
        return;
      }
  }

  void define_unknown(const YAML::Node& yn) {
    // Define the id anyway (untyped) so that later uses do not report it as missing.
    if (yn.IsMap() && yn["id"] && yn["id"].IsScalar() && !lookup(yn["id"].Scalar()))
      define(yn["id"].Scalar(), model_.graph.add_value(yn["id"].Scalar(), ValueType{}, r_.loc(yn["id"])));
  }

  void read_if(const YAML::Node& yn, Node& node) {
    std::string result = node.attr_string("result", "");
    for (const char* branch : {"then", "else"}) {
      node.blocks.emplace_back();
      Block& block = node.blocks.back();
      if (!yn[branch]) {
        r_.error(yn, "if: missing `" + std::string(branch) + ":` branch", "both branches are lists of nodes that define '" + result + "'");
        continue;
      }
      if (!r_.expect_sequence(yn[branch], std::string("if.") + branch)) continue;
      scopes_.emplace_back();
      read_block(yn[branch], block);
      auto it = scopes_.back().find(result);
      if (!result.empty()) {
        if (it == scopes_.back().end()) {
          r_.error(yn[branch], std::string("if: the ") + branch + " branch does not define '" + result + "'",
                   "each branch must have a node with id: " + result);
        } else {
          // Keep IR names unique: the branch-local definitions become result.then / result.else.
          model_.graph.value(it->second).name = model_.graph.fresh_name(result + "." + branch);
          block.results.push_back(it->second);
        }
      }
      scopes_.pop_back();
    }
  }

  void read_outputs(const YAML::Node& root) {
    if (!root["outputs"]) {
      diags_.error(SourceLoc{r_.file(), 1, 1}, "model has no outputs", "add outputs: [id, ...] listing what to compare");
      return;
    }
    const YAML::Node& outs = root["outputs"];
    std::vector<YAML::Node> items;
    if (outs.IsScalar()) items.push_back(outs);
    else if (r_.expect_sequence(outs, "outputs")) for (const auto& o : outs) items.push_back(o);
    if (outs.IsSequence() && outs.size() == 0) r_.error(outs, "outputs is empty", "list at least one id to compare");
    for (const auto& o : items) {
      if (!o.IsScalar()) { r_.error(o, "outputs entries must be ids"); continue; }
      auto v = lookup(o.Scalar());
      if (!v) {
        std::string close = closest_name(o.Scalar(), visible_names());
        r_.error(o, "output '" + o.Scalar() + "' is not defined", close.empty() ? "" : "did you mean '" + close + "'?");
        continue;
      }
      const ValueType& t = model_.graph.type(*v);
      if (t.is_scalar()) {
        r_.error(o, "output '" + o.Scalar() + "' is a host scalar (from item); outputs must be tensors",
                 "output the tensor before item instead");
        continue;
      }
      if (std::find(model_.graph.outputs.begin(), model_.graph.outputs.end(), *v) != model_.graph.outputs.end()) {
        r_.error(o, "output '" + o.Scalar() + "' is listed twice");
        continue;
      }
      model_.graph.outputs.push_back(*v);
    }
  }

  Diagnostics diags_;
  YamlReader r_;
  Model model_;
  std::set<std::string> declared_dims_;  // under dims: (data-dependent dims come from nonzero)
  std::set<std::string> input_dims_;     // dims some graph input has: bound when the graph runs
  std::vector<std::map<std::string, ValueId>> scopes_;
  std::map<std::string, std::optional<WeightsFile>> weights_files_;  // by path: params share a file
  std::map<std::string, std::string> weights_errors_;
  std::multimap<std::string, SourceLoc> all_ids_;
};

}  // namespace

Model load_model_text(const std::string& text, const std::string& path) { return ModelLoader(path).load(text); }

Model load_model_file(const std::string& path) {
  auto fail = [&](const std::string& message, const std::string& hint) {
    Diagnostics d;
    d.error(SourceLoc{path, 0, 0}, message, hint);
    throw ModelError(d);
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("is a directory, not a model file", "give a model.yaml inside it");
  std::optional<std::string> text = read_text_file(path);
  if (!text) fail(std::filesystem::exists(path, ec) ? "cannot read the model file" : "no such model file", "check the path");
  if (text->find_first_not_of(" \t\r\n") == std::string::npos)
    fail("the model file is empty", "a model starts with `format: gbcheck/v1` (docs/model-format.md)");
  return load_model_text(*text, path);
}

}  // namespace gbc
