#include "harness/model/model.h"

#include <algorithm>

#include "compiler/ir/retype.h"

namespace gbc {

ValueDist ValueDist::default_for(DType dtype) {
  ValueDist d;
  if (is_floating(dtype)) {
    d.kind = Kind::Normal;
    d.a = 0.0;
    d.b = 1.0;
  } else if (dtype == DType::Bool) {
    d.kind = Kind::Bernoulli;
    d.a = 0.5;
    d.b = 0.0;
  } else {
    d.kind = Kind::Int;
    d.a = dtype == DType::UInt8 ? 0.0 : -10.0;
    d.b = 10.0;
  }
  return d;
}

std::string ValueDist::str() const {
  auto num = [](double v) { return Scalar::from_float(v).str(); };
  auto integer = [](double v) { return std::to_string(static_cast<long long>(v)); };
  switch (kind) {
    case Kind::Normal: return "{dist: normal, mean: " + num(a) + ", std: " + num(b) + "}";
    case Kind::Uniform: return "{dist: uniform, low: " + num(a) + ", high: " + num(b) + "}";
    case Kind::Int: return "{dist: int, low: " + integer(a) + ", high: " + integer(b) + "}";
    case Kind::Bernoulli: return "{dist: bernoulli, p: " + num(a) + "}";
    case Kind::Const: return "{dist: const, value: " + num(a) + "}";
  }
  return "{}";
}

DType TensorSpec::dtype_in(int64_t variant) const {
  return dtypes.empty() ? dtype : dtypes[static_cast<size_t>(variant) % dtypes.size()];
}

int64_t Model::dtype_variants() const {
  size_t n = 1;
  for (const TensorSpec& s : inputs) n = std::max(n, s.dtypes.size());
  return static_cast<int64_t>(n);
}

bool Model::graph_for_variant(int64_t variant, Graph& out, Diagnostics& diags) const {
  out = graph;
  std::map<ValueId, DType> dtypes;
  for (const TensorSpec& s : inputs)
    if (s.dtype_in(variant) != s.dtype) dtypes.emplace(s.value, s.dtype_in(variant));
  return dtypes.empty() || retype_graph(out, dtypes, diags);
}

std::vector<const TensorSpec*> Model::all_tensor_specs() const {
  std::vector<const TensorSpec*> out;
  for (const auto& in : graph.inputs)
    if (const TensorSpec* s = find_spec(graph.name_of(in.value))) out.push_back(s);
  return out;
}

const TensorSpec* Model::find_spec(const std::string& spec_name) const {
  for (const auto& s : inputs)
    if (s.name == spec_name) return &s;
  for (const auto& s : params)
    if (s.name == spec_name) return &s;
  return nullptr;
}

}  // namespace gbc
