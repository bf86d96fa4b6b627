#include "harness/reduce/model_edits.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "compiler/aten/aten_convert.h"
#include "compiler/aten/eager_executor.h"
#include "compiler/ir/op_schema.h"
#include "compiler/ir/yaml_reader.h"
#include "compiler/passes/effects.h"
#include "harness/model/model_loader.h"
#include "harness/model/model_writer.h"

namespace gbc {
namespace {

template <typename F>
void for_each_arg_value(Node& n, F&& f) {
  for (Arg& a : n.args)
    if (a.is_value()) f(a.value);
  for (Block& b : n.blocks) {
    for (Node& inner : b.nodes) for_each_arg_value(inner, f);
    for (ValueId& r : b.results) f(r);
  }
}

bool same_type(const ValueType& a, const ValueType& b) {
  if (!a.is_tensor() || !b.is_tensor() || a.dtype != b.dtype || a.rank() != b.rank()) return false;
  for (size_t i = 0; i < a.rank(); ++i)
    if (!a.shape[i].same_as(b.shape[i])) return false;
  return true;
}

std::set<std::string> spec_dims(const Model& m) {
  std::set<std::string> out;
  for (const TensorSpec* s : m.all_tensor_specs())
    for (const DimExpr& d : s->shape) d.collect_symbols(out);
  return out;
}

// The shape a new input is declared with: the IR's when it is made of constants and input dims
// (so that halving a dim slices it too), else the sizes the value had.
SymShape input_shape(const Model& m, const ValueType& type, const at::Tensor& value) {
  const std::set<std::string> dims = spec_dims(m);
  for (const DimExpr& d : type.shape)
    if (!d.is_const() && !(d.is_symbol() && dims.count(d.name()))) return const_shape(value.sizes().vec());
  return type.shape;
}

std::string fresh_identifier(const Graph& g, const std::string& wanted, ValueId self) {
  std::string base;
  for (char c : wanted) base += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (base.empty() || std::isdigit(static_cast<unsigned char>(base[0]))) base = "v_" + base;
  auto taken = [&](const std::string& n) {
    for (size_t i = 0; i < g.values.size(); ++i)
      if (static_cast<ValueId>(i) != self && g.values[i].name == n) return true;
    return false;
  };
  if (YamlReader::is_identifier(base) && !taken(base)) return base;
  for (int k = 1;; ++k)
    if (!taken(base + "_" + std::to_string(k))) return base + "_" + std::to_string(k);
}

// The dtype of every value under each dtype variant of the model's inputs (`dtypes:` lists), or
// nothing when the model has one variant: a value promoted to an input declares the dtype it has
// in each variant, so the failing case's value (of its variant's dtype) fits the declaration.
std::vector<std::vector<DType>> dtypes_by_variant(const Model& m) {
  std::vector<std::vector<DType>> out;
  if (m.dtype_variants() < 2) return out;
  for (int64_t k = 0; k < m.dtype_variants(); ++k) {
    Graph retyped;
    Diagnostics diags;
    const Graph& g = m.graph_for_variant(k, retyped, diags) ? retyped : m.graph;
    std::vector<DType>& types = out.emplace_back();
    for (size_t v = 0; v < g.values.size(); ++v) types.push_back(g.values[v].type.dtype);
  }
  return out;
}

void make_input(ReductionSubject& s, ValueId v, const at::Tensor& value,
                const std::vector<std::vector<DType>>& variant_dtypes) {
  Graph& g = s.model.graph;
  std::string name = fresh_identifier(g, g.name_of(v), v);
  g.value(v).name = name;
  TensorSpec spec;
  spec.name = name;
  spec.value = v;
  spec.dtype = g.type(v).dtype;
  for (const std::vector<DType>& types : variant_dtypes) spec.dtypes.push_back(types[static_cast<size_t>(v)]);
  if (std::all_of(spec.dtypes.begin(), spec.dtypes.end(), [&](DType d) { return d == spec.dtype; })) spec.dtypes.clear();
  spec.shape = input_shape(s.model, g.type(v), value);
  spec.dist = ValueDist::default_for(spec.dtype);
  s.model.inputs.push_back(spec);
  g.inputs.insert(g.inputs.begin() + static_cast<std::ptrdiff_t>(s.model.inputs.size() - 1),
                  GraphInput{v, GraphInput::Role::Input});
  s.values[name] = value.contiguous().clone();
}

// 0 is simpler than 1, and both than anything else: a strict order, so that simplifying numbers
// cannot go back and forth between two values that both fail.
int number_rank(double v) { return v == 0.0 ? 0 : v == 1.0 ? 1 : 2; }
bool simpler_number(double candidate, double current) { return number_rank(candidate) < number_rank(current); }

TensorSpec* find_spec(Model& m, const std::string& name) {
  for (auto* specs : {&m.inputs, &m.params})
    for (TensorSpec& s : *specs)
      if (s.name == name) return &s;
  return nullptr;
}

}  // namespace

std::vector<at::Tensor> ReductionSubject::inputs() const {
  std::vector<at::Tensor> out;
  for (const TensorSpec* s : model.all_tensor_specs()) {
    auto it = values.find(s->name);
    GBC_INTERNAL_ASSERT(it != values.end(), "reduction lost the values of " + s->name);
    out.push_back(layouts.count(s->name) ? with_layout(it->second, layout(s->name)) : it->second);
  }
  return out;
}

LayoutPlan ReductionSubject::layout(const std::string& name) const {
  auto it = layouts.find(name);
  auto v = values.find(name);
  if (it == layouts.end() || v == values.end()) return {};
  return fit_layout(v->second, it->second.layout, it->second.dim);
}

void ReductionSubject::drop_unfit_layouts() {
  for (auto it = layouts.begin(); it != layouts.end();) {
    if (!values.count(it->first) || layout(it->first).layout == Layout::Contiguous) it = layouts.erase(it);
    else ++it;
  }
}

Model rebuild(const Model& edited) {
  WriteOptions w;
  return load_model_text(write_model_yaml(edited, w), edited.path);
}

void pin_dims(ReductionSubject& subject) {
  Graph& g = subject.model.graph;
  for (const auto& [name, size] : bind_dims(g, subject.inputs()))
    if (g.dims.has(name)) g.dims.declare(name, {size, size});
}

std::vector<size_t> removable_nodes(const Model& model) {
  const Graph& g = model.graph;
  std::vector<size_t> out;
  for (size_t i = 0; i < g.body.nodes.size(); ++i) {
    bool tensors = true;
    for (ValueId v : g.body.nodes[i].outputs) tensors = tensors && g.type(v).is_tensor();
    if (tensors) out.push_back(i);
  }
  return out;
}

bool remove_nodes(ReductionSubject& s, const std::vector<size_t>& indices, const std::map<ValueId, at::Tensor>& ev,
                  Removal how) {
  Graph& g = s.model.graph;
  const std::set<size_t> drop(indices.begin(), indices.end());
  std::map<ValueId, ValueId> subst;
  auto resolve = [&](ValueId& v) {
    if (auto it = subst.find(v); it != subst.end()) v = it->second;
  };
  std::set<ValueId> dropped_outputs;
  std::vector<Node> kept;
  bool removed = false;
  const std::vector<std::vector<DType>> variant_dtypes = dtypes_by_variant(s.model);
  for (size_t i = 0; i < g.body.nodes.size(); ++i) {
    Node n = std::move(g.body.nodes[i]);
    for_each_arg_value(n, resolve);
    if (!drop.count(i)) {
      kept.push_back(std::move(n));
      continue;
    }
    // Decide for every output before changing anything: a node that cannot go stays whole.
    enum class How { Bypass, Input, DropOutput };
    std::vector<std::pair<How, ValueId>> plan;
    for (ValueId v : n.outputs) {
      const ValueType& t = g.type(v);
      std::optional<ValueId> bypass;
      for (const Arg& a : n.args)
        if (a.is_value() && same_type(g.type(a.value), t)) {
          bypass = a.value;
          break;
        }
      const bool is_output = std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end();
      const bool has_value = ev.count(v) != 0;
      if (!t.is_tensor()) plan.push_back({How::DropOutput, kNoValue});  // removable_nodes excludes these
      else if (is_in_place_op(n.op) && n.args[0].is_value()) plan.push_back({How::Bypass, n.args[0].value});
      else if ((is_output || how == Removal::Bypass) && bypass) plan.push_back({How::Bypass, *bypass});
      else if (is_output && g.outputs.size() > dropped_outputs.size() + 1) plan.push_back({How::DropOutput, v});
      else if (has_value) plan.push_back({How::Input, v});
      else if (bypass) plan.push_back({How::Bypass, *bypass});
      else plan.push_back({How::DropOutput, kNoValue});
    }
    bool possible = true;
    for (size_t k = 0; k < plan.size(); ++k)
      possible = possible && g.type(n.outputs[k]).is_tensor() && !(plan[k].first == How::DropOutput && plan[k].second == kNoValue);
    if (!possible) {
      kept.push_back(std::move(n));
      continue;
    }
    for (size_t k = 0; k < plan.size(); ++k) {
      ValueId v = n.outputs[k];
      switch (plan[k].first) {
        case How::Bypass: subst[v] = plan[k].second; break;
        case How::Input: make_input(s, v, ev.at(v), variant_dtypes); break;
        case How::DropOutput: dropped_outputs.insert(v); break;
      }
    }
    removed = true;
  }
  g.body.nodes = std::move(kept);
  std::vector<ValueId> outputs;
  for (ValueId v : g.outputs) {
    if (dropped_outputs.count(v)) continue;
    resolve(v);
    outputs.push_back(v);
  }
  g.outputs = outputs;
  remove_dead_code(s);
  return removed;
}

void remove_dead_code(ReductionSubject& s) {
  Graph& g = s.model.graph;
  std::set<ValueId> live(g.outputs.begin(), g.outputs.end());
  std::vector<bool> keep(g.body.nodes.size(), false);
  for (size_t i = g.body.nodes.size(); i-- > 0;) {
    const Node& n = g.body.nodes[i];
    bool needed = has_side_effect(n);
    for (ValueId v : n.outputs) needed = needed || live.count(v);
    if (!needed) continue;
    keep[i] = true;
    collect_uses(n, live);
  }
  std::vector<Node> nodes;
  for (size_t i = 0; i < keep.size(); ++i)
    if (keep[i]) nodes.push_back(std::move(g.body.nodes[i]));
  g.body.nodes = std::move(nodes);

  auto unused = [&](const TensorSpec& spec) { return !live.count(spec.value); };
  for (auto* specs : {&s.model.inputs, &s.model.params}) {
    for (const TensorSpec& spec : *specs)
      if (unused(spec)) s.values.erase(spec.name);
    specs->erase(std::remove_if(specs->begin(), specs->end(), unused), specs->end());
  }
  g.inputs.erase(std::remove_if(g.inputs.begin(), g.inputs.end(), [&](const GraphInput& in) { return !live.count(in.value); }),
                 g.inputs.end());
}

void set_outputs(ReductionSubject& s, const std::vector<ValueId>& outputs) {
  s.model.graph.outputs = outputs;
  remove_dead_code(s);
}

namespace {

at::Tensor half_of(const at::Tensor& t, int64_t axis, int64_t half, Half keep) {
  const int64_t start = keep == Half::Lower ? 0 : t.size(axis) - half;
  return t.narrow(axis, start, half).contiguous();
}

}  // namespace

bool halve_dim(ReductionSubject& s, const std::string& name, Half keep) {
  Graph& g = s.model.graph;
  const DimRange* r = g.dims.range(name);
  if (!r || r->min != r->max || r->min <= 1) return false;
  const int64_t half = r->min / 2;
  for (const TensorSpec* spec : s.model.all_tensor_specs())
    for (const DimExpr& d : spec->shape) {
      std::set<std::string> syms;
      d.collect_symbols(syms);
      if (syms.count(name) && !d.is_symbol()) return false;  // B * 4 cannot be sliced to half of B
    }
  for (auto* specs : {&s.model.inputs, &s.model.params})
    for (TensorSpec& spec : *specs)
      for (size_t k = 0; k < spec.shape.size(); ++k)
        if (spec.shape[k].is_symbol() && spec.shape[k].name() == name)
          s.values[spec.name] = half_of(s.values[spec.name], static_cast<int64_t>(k), half, keep);
  g.dims.declare(name, {half, half});
  return true;
}

bool halve_literal_size(ReductionSubject& s, int64_t size, Half keep) {
  if (size <= 1) return false;
  bool any = false;
  for (auto* specs : {&s.model.inputs, &s.model.params})
    for (TensorSpec& spec : *specs)
      for (size_t k = 0; k < spec.shape.size(); ++k)
        if (spec.shape[k].is_const() && spec.shape[k].value() == size) {
          spec.shape[k] = DimExpr(size / 2);
          s.values[spec.name] = half_of(s.values[spec.name], static_cast<int64_t>(k), size / 2, keep);
          any = true;
        }
  return any;
}

std::vector<int64_t> literal_sizes(const Model& model) {
  std::set<int64_t> sizes;
  for (const TensorSpec* spec : model.all_tensor_specs())
    for (const DimExpr& d : spec->shape)
      if (d.is_const() && d.value() > 1) sizes.insert(d.value());
  return {sizes.rbegin(), sizes.rend()};
}

std::optional<DType> simpler_dtype(DType dtype) {
  if (is_floating(dtype) && dtype != DType::Float32) return DType::Float32;
  if (is_integral(dtype) && dtype != DType::Int64) return DType::Int64;
  return std::nullopt;
}

void set_input_dtype(ReductionSubject& s, const std::string& name, DType dtype) {
  TensorSpec* spec = find_spec(s.model, name);
  GBC_INTERNAL_ASSERT(spec != nullptr, "no input or param " + name);
  spec->dtype = dtype;
  // A distribution written for the old dtype may not suit the new one (int ranges on floats do).
  if (spec->dist.explicit_in_model && spec->dist.kind != ValueDist::Kind::Const && spec->dist.kind != ValueDist::Kind::Int)
    spec->dist = ValueDist::default_for(dtype);
  s.values[name] = s.values[name].to(to_aten(dtype));
}

std::vector<AttrValue> simpler_attrs(const AttrValue& value) {
  std::vector<AttrValue> out;
  if (auto b = std::get_if<bool>(&value)) {
    if (*b) out.push_back(false);
  } else if (auto i = std::get_if<int64_t>(&value)) {
    for (int64_t c : {int64_t{0}, int64_t{1}})
      if (simpler_number(static_cast<double>(c), static_cast<double>(*i))) out.push_back(c);
  } else if (auto d = std::get_if<double>(&value)) {
    for (double c : {0.0, 1.0})
      if (simpler_number(c, *d)) out.push_back(c);
  } else if (auto s = std::get_if<Scalar>(&value)) {
    for (const Scalar& c : simpler_scalars(*s)) out.push_back(c);
  }
  return out;
}

std::vector<Scalar> simpler_scalars(const Scalar& value) {
  std::vector<Scalar> out;
  switch (value.kind) {
    case ScalarKind::Bool:
      if (value.b) out.push_back(Scalar::from_bool(false));
      break;
    case ScalarKind::Int:
      for (int64_t c : {int64_t{0}, int64_t{1}})
        if (simpler_number(static_cast<double>(c), static_cast<double>(value.i))) out.push_back(Scalar::from_int(c));
      break;
    default:
      for (double c : {0.0, 1.0})
        if (simpler_number(c, value.f)) out.push_back(Scalar::from_float(c));
  }
  return out;
}

std::map<ValueId, at::Tensor> eager_values(const ReductionSubject& subject) {
  const Graph& g = subject.model.graph;
  std::set<ValueId> top;
  for (const Node& n : g.body.nodes) top.insert(n.outputs.begin(), n.outputs.end());
  std::map<ValueId, at::Tensor> out;
  EagerOptions opt;
  opt.on_value = [&](const Node&, ValueId v, const RtValue& value) {
    // Clones: a later in-place op may write into the tensor.
    if (top.count(v) && !value.is_scalar() && value.tensor.defined()) out[v] = value.tensor.clone();
  };
  std::vector<at::Tensor> inputs;
  for (const at::Tensor& t : subject.inputs()) inputs.push_back(t.clone());
  run_eager(g, inputs, opt);
  return out;
}

std::optional<double> constant_value(const at::Tensor& t) {
  if (t.numel() == 0) return std::nullopt;
  at::Tensor d = t.to(at::kDouble);
  double lo = d.min().item<double>(), hi = d.max().item<double>();
  if (!(lo == hi) || !std::isfinite(lo)) return std::nullopt;
  return lo;
}

}  // namespace gbc
