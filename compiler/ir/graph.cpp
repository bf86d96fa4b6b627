#include "compiler/ir/graph.h"

#include <cmath>
#include <sstream>

namespace gbc {

double Scalar::to_double() const {
  switch (kind) {
    case ScalarKind::Float: return f;
    case ScalarKind::Int: return static_cast<double>(i);
    case ScalarKind::Bool: return b ? 1.0 : 0.0;
  }
  return 0.0;
}

int64_t Scalar::to_int() const {
  switch (kind) {
    case ScalarKind::Float: return static_cast<int64_t>(f);
    case ScalarKind::Int: return i;
    case ScalarKind::Bool: return b ? 1 : 0;
  }
  return 0;
}

bool Scalar::operator==(const Scalar& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case ScalarKind::Float: return f == o.f || (std::isnan(f) && std::isnan(o.f));
    case ScalarKind::Int: return i == o.i;
    case ScalarKind::Bool: return b == o.b;
  }
  return false;
}

std::string Scalar::str() const {
  switch (kind) {
    case ScalarKind::Bool: return b ? "true" : "false";
    case ScalarKind::Int: return std::to_string(i);
    case ScalarKind::Float: {
      if (std::isnan(f)) return "nan";
      if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
      std::ostringstream ss;
      ss.precision(17);
      ss << f;
      std::string s = ss.str();
      // Keep it a float when read back ("2" would parse as an int).
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";
      return s;
    }
  }
  return "?";
}

std::string ValueType::str() const {
  switch (kind) {
    case Kind::Unknown: return "?";
    case Kind::Scalar: return "scalar(" + std::string(scalar_kind_name(scalar_kind)) + ")";
    case Kind::Tensor: return std::string(dtype_name(dtype)) + shape_str(shape);
  }
  return "?";
}

std::string attr_str(const AttrValue& value) {
  struct Visitor {
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return Scalar::from_float(v).str(); }
    std::string operator()(const std::string& v) const { return v; }
    std::string operator()(const std::vector<int64_t>& v) const {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
      return s + "]";
    }
    std::string operator()(const SymShape& v) const { return shape_str(v); }
    std::string operator()(DType v) const { return std::string(dtype_name(v)); }
    std::string operator()(const Scalar& v) const { return v.str(); }
    std::string operator()(const std::vector<double>& v) const {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + Scalar::from_float(v[i]).str();
      return s + "]";
    }
    std::string operator()(NoneAttr) const { return "null"; }
  };
  return std::visit(Visitor{}, value);
}

const AttrValue* Node::attr(const std::string& name) const {
  auto it = attrs.find(name);
  return it == attrs.end() ? nullptr : &it->second;
}

int64_t Node::attr_int(const std::string& name, int64_t fallback) const {
  const AttrValue* v = attr(name);
  if (!v) return fallback;
  if (auto i = std::get_if<int64_t>(v)) return *i;
  if (auto b = std::get_if<bool>(v)) return *b;
  if (auto s = std::get_if<Scalar>(v)) return s->to_int();
  if (auto l = std::get_if<std::vector<int64_t>>(v); l && l->size() == 1) return (*l)[0];
  internal_error(op_name(op) + ": attribute '" + name + "' is not an int");
}

double Node::attr_float(const std::string& name, double fallback) const {
  const AttrValue* v = attr(name);
  if (!v) return fallback;
  if (auto d = std::get_if<double>(v)) return *d;
  if (auto i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  if (auto s = std::get_if<Scalar>(v)) return s->to_double();
  internal_error(op_name(op) + ": attribute '" + name + "' is not a number");
}

bool Node::attr_bool(const std::string& name, bool fallback) const {
  const AttrValue* v = attr(name);
  if (!v) return fallback;
  if (auto b = std::get_if<bool>(v)) return *b;
  internal_error(op_name(op) + ": attribute '" + name + "' is not a bool");
}

std::string Node::attr_string(const std::string& name, const std::string& fallback) const {
  const AttrValue* v = attr(name);
  if (!v) return fallback;
  if (auto s = std::get_if<std::string>(v)) return *s;
  internal_error(op_name(op) + ": attribute '" + name + "' is not a string");
}

std::optional<std::vector<int64_t>> Node::attr_int_list(const std::string& name) const {
  const AttrValue* v = attr(name);
  if (!v) return std::nullopt;
  if (auto i = std::get_if<int64_t>(v)) return std::vector<int64_t>{*i};
  if (auto l = std::get_if<std::vector<int64_t>>(v)) return *l;
  if (auto s = std::get_if<SymShape>(v)) {
    std::vector<int64_t> out;
    for (const auto& d : *s) {
      if (!d.is_const()) internal_error(op_name(op) + ": attribute '" + name + "' has a symbolic entry");
      out.push_back(d.value());
    }
    return out;
  }
  internal_error(op_name(op) + ": attribute '" + name + "' is not an int list");
}

std::optional<SymShape> Node::attr_shape(const std::string& name) const {
  const AttrValue* v = attr(name);
  if (!v) return std::nullopt;
  if (auto s = std::get_if<SymShape>(v)) return *s;
  if (auto l = std::get_if<std::vector<int64_t>>(v)) return const_shape(*l);
  if (auto i = std::get_if<int64_t>(v)) return SymShape{*i};
  internal_error(op_name(op) + ": attribute '" + name + "' is not a shape");
}

std::optional<DType> Node::attr_dtype(const std::string& name) const {
  const AttrValue* v = attr(name);
  if (!v) return std::nullopt;
  if (auto d = std::get_if<DType>(v)) return *d;
  internal_error(op_name(op) + ": attribute '" + name + "' is not a dtype");
}

std::optional<Scalar> Node::attr_scalar(const std::string& name) const {
  const AttrValue* v = attr(name);
  if (!v) return std::nullopt;
  if (auto s = std::get_if<Scalar>(v)) return *s;
  if (auto d = std::get_if<double>(v)) return Scalar::from_float(*d);
  if (auto i = std::get_if<int64_t>(v)) return Scalar::from_int(*i);
  if (auto b = std::get_if<bool>(v)) return Scalar::from_bool(*b);
  internal_error(op_name(op) + ": attribute '" + name + "' is not a number");
}

ValueId Graph::add_value(std::string name, ValueType type, SourceLoc loc) {
  values.push_back({std::move(name), std::move(type), std::move(loc)});
  return static_cast<ValueId>(values.size() - 1);
}

const ValueInfo& Graph::value(ValueId id) const {
  GBC_INTERNAL_ASSERT(id >= 0 && static_cast<size_t>(id) < values.size(), "bad value id " + std::to_string(id));
  return values[static_cast<size_t>(id)];
}

ValueInfo& Graph::value(ValueId id) {
  GBC_INTERNAL_ASSERT(id >= 0 && static_cast<size_t>(id) < values.size(), "bad value id " + std::to_string(id));
  return values[static_cast<size_t>(id)];
}

std::string Graph::fresh_name(const std::string& base) const {
  if (!find_value(base)) return base;
  for (int k = 1;; ++k) {
    std::string candidate = base + "." + std::to_string(k);
    if (!find_value(candidate)) return candidate;
  }
}

std::optional<ValueId> Graph::find_value(const std::string& name) const {
  for (size_t i = 0; i < values.size(); ++i)
    if (values[i].name == name) return static_cast<ValueId>(i);
  return std::nullopt;
}

bool Graph::is_graph_input(ValueId id) const {
  for (const auto& in : inputs)
    if (in.value == id) return true;
  return false;
}

size_t Graph::node_count() const {
  size_t n = 0;
  for_each_node(body, [&](const Node&) { ++n; });
  return n;
}

void collect_uses(const Node& node, std::set<ValueId>& out) {
  for (const Arg& a : node.args)
    if (a.is_value()) out.insert(a.value);
  for (const Block& b : node.blocks) {
    for (const Node& inner : b.nodes) collect_uses(inner, out);
    out.insert(b.results.begin(), b.results.end());
  }
}

std::map<ValueId, const Node*> value_producers(const Graph& graph) {
  std::map<ValueId, const Node*> producers;
  for_each_node(graph.body, [&](const Node& n) {
    for (ValueId o : n.outputs) producers[o] = &n;
  });
  return producers;
}

std::set<ValueId> upstream_values(const std::map<ValueId, const Node*>& producers, ValueId v) {
  std::set<ValueId> seen;
  std::vector<ValueId> pending = {v};
  while (!pending.empty()) {
    const ValueId u = pending.back();
    pending.pop_back();
    if (!seen.insert(u).second) continue;
    auto it = producers.find(u);
    if (it == producers.end()) continue;
    std::set<ValueId> uses;
    collect_uses(*it->second, uses);
    pending.insert(pending.end(), uses.begin(), uses.end());
  }
  return seen;
}

}  // namespace gbc
