#include "harness/model/model_writer.h"

#include <map>
#include <set>
#include <sstream>

#include "compiler/ir/generic_op.h"
#include "compiler/ir/op_schema.h"
#include "compiler/ir/yaml_reader.h"
#include "harness/model/tolerance_presets.h"

namespace gbc {
namespace {

std::string number(double v) { return Scalar::from_float(v).str(); }

std::string yaml_scalar(const Scalar& s) {
  if (s.kind == ScalarKind::Float) {
    if (std::isnan(s.f)) return ".nan";
    if (std::isinf(s.f)) return s.f > 0 ? ".inf" : "-.inf";
  }
  return s.str();
}

std::string list(const std::vector<std::string>& items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + items[i];
  return s + "]";
}

std::string shape_yaml(const SymShape& shape) {
  std::vector<std::string> items;
  for (const auto& d : shape) items.push_back(d.str());
  return list(items);
}

// Plain when it reads back as the same string, double-quoted otherwise.
std::string yaml_string(const std::string& s) {
  bool plain = !s.empty() && YamlReader::is_identifier(s) && s != "true" && s != "false" && s != "null";
  if (plain) return s;
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    if (c == '\n') { q += "\\n"; continue; }
    q += c;
  }
  return q + "\"";
}

// A flow list of strings, each as yaml_string writes it (a name may hold `]`, `,` or quotes).
std::string string_list(const std::vector<std::string>& items) {
  std::vector<std::string> written;
  for (const std::string& i : items) written.push_back(yaml_string(i));
  return list(written);
}

std::string attr_yaml(const AttrValue& v) {
  if (auto s = std::get_if<Scalar>(&v)) return yaml_scalar(*s);
  if (auto d = std::get_if<double>(&v)) return yaml_scalar(Scalar::from_float(*d));
  if (auto sh = std::get_if<SymShape>(&v)) return shape_yaml(*sh);
  if (auto str = std::get_if<std::string>(&v)) return yaml_string(*str);
  if (auto fl = std::get_if<std::vector<double>>(&v)) {
    std::vector<std::string> items;
    for (double x : *fl) items.push_back(yaml_scalar(Scalar::from_float(x)));
    return list(items);
  }
  return attr_str(v);
}

// Maps IR values to the names the YAML uses: in-place results go by their self argument's name
// (the loader rebinds it), branch results by the if's result name, others by an identifier.
class Namer {
 public:
  explicit Namer(const Graph& g) : g_(g) {
    for (const auto& v : g.values) used_.insert(v.name);
    visit(g.body);
  }
  std::string operator()(ValueId v) {
    if (auto it = names_.find(v); it != names_.end()) return it->second;
    std::string n = g_.name_of(v);
    if (!YamlReader::is_identifier(n)) {
      std::string base;
      for (char c : n) base += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "v_" + base;
      n = base;
      for (int k = 1; used_.count(n); ++k) n = base + "_" + std::to_string(k);
      used_.insert(n);
    }
    names_[v] = n;
    return n;
  }

 private:
  void visit(const Block& b) {
    for (const auto& n : b.nodes) {
      if (n.op == OpId::If && !n.outputs.empty()) {
        std::string r = n.attr_string("result", "");
        names_[n.outputs[0]] = r;
        for (const auto& blk : n.blocks)
          for (ValueId res : blk.results) names_[res] = r;
      }
      if (is_in_place_op(n.op) && !n.outputs.empty() && n.args[0].is_value())
        names_[n.outputs[0]] = (*this)(n.args[0].value);
      for (const auto& blk : n.blocks) visit(blk);
    }
  }
  const Graph& g_;
  std::map<ValueId, std::string> names_;
  std::set<std::string> used_;
};

void write_block(const Graph& g, const Block& block, Namer& name, const std::string& indent, std::ostream& out) {
  for (const auto& n : block.nodes) {
    const OpSchema* schema = find_op_schema(n.op);
    std::vector<std::string> args;
    for (const auto& a : n.args) args.push_back(a.is_value() ? name(a.value) : yaml_scalar(a.scalar));
    bool in_place = schema && schema->cls == OpClass::InPlace;
    if (n.op == OpId::If) {
      out << indent << "- op: if\n" << indent << "  args: " << list(args) << "\n";
      for (const auto& [k, v] : n.attrs) out << indent << "  " << k << ": " << attr_yaml(v) << "\n";
      const char* branch[] = {"then", "else"};
      for (size_t i = 0; i < n.blocks.size() && i < 2; ++i) {
        out << indent << "  " << branch[i] << ":\n";
        write_block(g, n.blocks[i], name, indent + "    ", out);
      }
      continue;
    }
    out << indent << "- {";
    if (n.outputs.size() > 1) {
      std::vector<std::string> ids;
      for (ValueId o : n.outputs) ids.push_back(name(o));
      out << "id: " << list(ids) << ", ";
    } else if (!n.outputs.empty() && !in_place) {
      out << "id: " << name(n.outputs[0]) << ", ";
    }
    out << "op: " << op_name(n.op);
    if (is_generic_op(n)) {
      // The schema first, the tensors, then every other argument by name under attrs:.
      out << ", schema: " << yaml_string(n.attr_string(kGenericSchemaAttr, ""));
      if (!args.empty()) out << ", args: " << list(args);
      std::vector<std::string> attrs;
      for (const auto& [k, v] : n.attrs)
        if (k != kGenericSchemaAttr) attrs.push_back(k + ": " + attr_yaml(v));
      if (!attrs.empty()) {
        out << ", attrs: {";
        for (size_t i = 0; i < attrs.size(); ++i) out << (i ? ", " : "") << attrs[i];
        out << "}";
      }
    } else {
      if (!args.empty()) out << ", args: " << list(args);
      for (const auto& [k, v] : n.attrs) out << ", " << k << ": " << attr_yaml(v);
    }
    if (!n.loc.origin.empty()) out << ", source: " << yaml_string(n.loc.origin);
    out << "}\n";
  }
}

void write_specs(const std::vector<TensorSpec>& specs, const char* section, std::ostream& out) {
  if (specs.empty()) return;
  out << section << ":\n";
  for (const auto& s : specs) {
    out << "  " << s.name << ": {shape: " << shape_yaml(s.shape) << ", dtype: " << dtype_name(s.dtype);
    if (!s.dtypes.empty()) {
      out << ", dtypes: [";
      for (size_t k = 0; k < s.dtypes.size(); ++k) out << (k ? ", " : "") << dtype_name(s.dtypes[k]);
      out << "]";
    }
    if (s.weights) out << ", values: {file: " << yaml_string(s.weights->file) << ", tensor: " << yaml_string(s.weights->tensor) << "}";
    else if (s.dist.explicit_in_model) out << ", values: " << s.dist.str();
    out << "}\n";
  }
}

void write_check(const CheckConfig& c, std::ostream& out) {
  const CheckConfig d;
  std::ostringstream s;
  if (c.seed != d.seed) s << "  seed: " << c.seed << "\n";
  if (c.cases != d.cases) s << "  cases: " << c.cases << "\n";
  if (c.device != d.device) s << "  device: " << c.device << "\n";
  if (c.backends != d.backends) s << "  backends: " << string_list(c.backends) << "\n";
  // A run's own presets (--tolerances-config) are written as the model's, so that a reduced
  // model or a repro is judged as the run was.
  std::map<DType, Tolerance> by_dtype = c.tolerance;
  for (const auto& [dt, t] : c.tolerance_presets) {
    const Tolerance shipped = default_tolerance(dt);
    if (t.rtol != shipped.rtol || t.atol != shipped.atol) by_dtype.emplace(dt, t);
  }
  if (!by_dtype.empty() || !c.output_tolerance.empty()) {
    s << "  tolerance:\n";
    for (const auto& [dt, t] : by_dtype)
      s << "    " << dtype_name(dt) << ": {rtol: " << number(t.rtol) << ", atol: " << number(t.atol) << "}\n";
    for (const auto& [o, t] : c.output_tolerance)
      s << "    " << o << ": {rtol: " << number(t.rtol) << ", atol: " << number(t.atol) << "}\n";
  }
  if (c.equal_nan != d.equal_nan) s << "  equal_nan: " << (c.equal_nan ? "true" : "false") << "\n";
  auto expectation = [](const Expectation& e) {
    std::vector<std::string> ex;
    if (e.graph_breaks) ex.push_back("graph_breaks: " + std::to_string(*e.graph_breaks));
    if (e.fallbacks) ex.push_back("fallbacks: " + std::to_string(*e.fallbacks));
    if (e.recompiles) ex.push_back("recompiles: " + std::to_string(*e.recompiles));
    if (e.min_speedup) ex.push_back("min_speedup: " + number(*e.min_speedup));
    return ex;
  };
  std::vector<std::string> ex = expectation(c.expect);
  for (const auto& [backend, e] : c.expect.per_backend) {
    std::string inner;
    for (const auto& item : expectation(e)) inner += (inner.empty() ? "" : ", ") + item;
    ex.push_back(backend + ": {" + inner + "}");
  }
  if (!ex.empty()) {
    s << "  expect: {";
    for (size_t i = 0; i < ex.size(); ++i) s << (i ? ", " : "") << ex[i];
    s << "}\n";
  }
  if (!c.oracles.empty()) s << "  oracle: " << string_list(c.oracles) << "\n";
  if (c.error_stat != d.error_stat) s << "  error_stat: " << c.error_stat << "\n";
  if (c.quantile != d.quantile) s << "  quantile: " << number(c.quantile) << "\n";
  if (c.fp64_multiplier != d.fp64_multiplier) s << "  fp64_multiplier: " << number(c.fp64_multiplier) << "\n";
  if (c.dynamic != d.dynamic) s << "  dynamic: " << c.dynamic << "\n";
  if (c.cache_size_limit != d.cache_size_limit) s << "  cache_size_limit: " << c.cache_size_limit << "\n";
  if (c.capture_scalar_outputs) s << "  capture_scalar_outputs: true\n";
  if (c.reorderable_logging) s << "  reorderable_logging: true\n";
  if (c.rewrite_if) s << "  rewrite_if: true\n";
  if (c.special_values != d.special_values) s << "  special_values: " << number(c.special_values) << "\n";
  if (c.layouts != d.layouts) s << "  layouts: " << c.layouts << "\n";
  if (c.recompile_sequence) s << "  recompile_sequence: true\n";
  if (c.iterations.steps > 0) {
    s << "  iterations: {steps: " << c.iterations.steps;
    if (!c.iterations.feedback.empty()) {
      s << ", feedback: {";
      for (size_t i = 0; i < c.iterations.feedback.size(); ++i)
        s << (i ? ", " : "") << c.iterations.feedback[i].first << ": " << c.iterations.feedback[i].second;
      s << "}";
    }
    s << "}\n";
  }
  if (!s.str().empty()) out << "check:\n" << s.str();
}

}  // namespace

std::string write_model_yaml(const Model& model, const WriteOptions& options) {
  std::ostringstream out;
  if (!options.header_comment.empty()) {
    std::istringstream lines(options.header_comment);
    for (std::string line; std::getline(lines, line);) out << "# " << line << "\n";
  }
  const Graph& g = model.graph;
  out << "format: gbcheck/v1\n";
  if (!model.name.empty()) out << "name: " << model.name << "\n";
  // Only the dims that inputs and params declare; data-dependent ones (nonzero) are re-derived.
  std::set<std::string> declared;
  for (const auto* specs : {&model.inputs, &model.params})
    for (const auto& s : *specs)
      for (const auto& d : s.shape) d.collect_symbols(declared);
  for_each_node(g.body, [&](const Node& n) {
    for (const auto& [k, v] : n.attrs)
      if (auto sh = std::get_if<SymShape>(&v))
        for (const auto& d : *sh) d.collect_symbols(declared);
  });
  std::vector<std::string> dims;
  for (const auto& [name, r] : g.dims.ranges()) {
    if (!declared.count(name)) continue;
    dims.push_back(name + ": " + (r.min == r.max ? std::to_string(r.min)
                                                  : "[" + std::to_string(r.min) + ", " + std::to_string(r.max) + "]"));
  }
  if (!dims.empty()) {
    out << "dims: {";
    for (size_t i = 0; i < dims.size(); ++i) out << (i ? ", " : "") << dims[i];
    out << "}\n";
  }
  write_specs(model.inputs, "inputs", out);
  write_specs(model.params, "params", out);
  Namer namer(g);
  out << "graph:\n";
  write_block(g, g.body, namer, "  ", out);
  std::vector<std::string> outs;
  for (ValueId o : g.outputs) outs.push_back(namer(o));
  out << "outputs: " << list(outs) << "\n";
  if (options.write_check) write_check(model.check, out);
  return out.str();
}

}  // namespace gbc
