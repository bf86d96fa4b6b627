#include "compiler/ir/op_schema.h"

#include <algorithm>
#include <limits>

#include "compiler/ir/diagnostics.h"

namespace gbc {
namespace {

AttrSpec attr(std::string name, AttrType type, std::optional<AttrValue> def = std::nullopt, std::string doc = "") {
  AttrSpec a;
  a.name = std::move(name);
  a.type = type;
  a.default_value = std::move(def);
  a.doc = std::move(doc);
  return a;
}

AttrSpec required(std::string name, AttrType type, std::string doc = "") {
  AttrSpec a = attr(std::move(name), type, std::nullopt, std::move(doc));
  a.required = true;
  return a;
}

AttrSpec choice(std::string name, std::vector<std::string> choices, std::string def) {
  AttrSpec a = attr(std::move(name), AttrType::String, AttrValue(def));
  a.choices = std::move(choices);
  return a;
}

OpSchema op(std::string name, OpClass cls, int min_args, int max_args, ArgKind kind, std::vector<AttrSpec> attrs,
            std::string signature, std::string doc) {
  OpSchema s;
  s.name = std::move(name);
  s.cls = cls;
  s.min_args = min_args;
  s.max_args = max_args;
  s.arg_kind = kind;
  s.attrs = std::move(attrs);
  s.signature = std::move(signature);
  s.doc = std::move(doc);
  return s;
}

// Most unary ops need no more than their name; the piecewise ones say what they compute.
std::string unary_doc(const std::string& name) {
  if (name == "hardswish") return "elementwise hardswish: x * min(max(x + 3, 0), 6) / 6";
  if (name == "hardsigmoid") return "elementwise hardsigmoid: min(max(x + 3, 0), 6) / 6";
  return "elementwise " + name;
}

std::vector<OpSchema> build_table() {
  std::vector<OpSchema> t;
  const auto T = ArgKind::Tensor;
  const auto TN = ArgKind::TensorOrNumber;
  auto dim_attrs = [] {
    return std::vector<AttrSpec>{attr("dim", AttrType::IntList, std::nullopt, "dims to reduce (int or list); all when absent"),
                                 attr("keepdim", AttrType::Bool, AttrValue(false))};
  };

  for (const char* u : {"neg", "abs", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid",
                        "relu", "silu", "hardswish", "hardsigmoid", "erf", "reciprocal", "floor", "ceil", "round", "sign",
                        "logical_not"})
    t.push_back(op(u, OpClass::Unary, 1, 1, T, {}, std::string(u) + "(self)", unary_doc(u)));
  t.push_back(op("gelu", OpClass::Unary, 1, 1, T, {choice("approximate", {"none", "tanh"}, "none")},
                 "gelu(self, approximate='none')", "elementwise GELU, exact (erf) or tanh approximation"));

  for (const char* b : {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "remainder", "eq", "ne", "lt", "le",
                        "gt", "ge", "logical_and", "logical_or"})
    t.push_back(op(b, OpClass::Binary, 2, 2, TN, {}, std::string(b) + "(self, other)",
                   "elementwise " + std::string(b) + " with broadcasting; either operand may be a number"));

  t.push_back(op("where", OpClass::Where, 3, 3, TN, {}, "where(condition, self, other)",
                 "elementwise select: self where condition is true, else other"));
  t.push_back(op("clamp", OpClass::Clamp, 1, 1, T, {attr("min", AttrType::Number), attr("max", AttrType::Number)},
                 "clamp(self, min=None, max=None)", "elementwise clamp to [min, max]"));
  t.push_back(op("to", OpClass::Cast, 1, 1, T, {required("dtype", AttrType::DType)}, "to(self, dtype)",
                 "cast to another dtype"));

  for (const char* r : {"sum", "mean", "amax", "amin", "prod", "logsumexp"})
    t.push_back(op(r, OpClass::Reduction, 1, 1, T, dim_attrs(), std::string(r) + "(self, dim=None, keepdim=False)",
                   std::string(r) + " over dims"));
  {
    auto a = dim_attrs();
    a.push_back(attr("correction", AttrType::Int, AttrValue(int64_t{1}), "Bessel's correction (1: unbiased)"));
    t.push_back(op("var", OpClass::Reduction, 1, 1, T, a, "var(self, dim=None, correction=1, keepdim=False)",
                   "variance over dims"));
  }
  t.push_back(op("argmax", OpClass::Reduction, 1, 1, T,
                 {attr("dim", AttrType::Int, std::nullopt, "a single dim; the flattened tensor when absent"),
                  attr("keepdim", AttrType::Bool, AttrValue(false))},
                 "argmax(self, dim=None, keepdim=False)", "index of the largest value (first one on ties)"));

  t.push_back(op("softmax", OpClass::Normalization, 1, 1, T, {required("dim", AttrType::Int)}, "softmax(self, dim)",
                 "softmax along dim"));
  t.push_back(op("log_softmax", OpClass::Normalization, 1, 1, T, {required("dim", AttrType::Int)},
                 "log_softmax(self, dim)", "log of softmax along dim"));
  t.push_back(op("layer_norm", OpClass::Normalization, 1, 3, T,
                 {required("normalized_shape", AttrType::Shape), attr("eps", AttrType::Float, AttrValue(1e-5))},
                 "layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5)",
                 "layer normalization over the trailing normalized_shape dims; args [x, weight, bias]"));
  t.push_back(op("batch_norm", OpClass::Normalization, 5, 5, T,
                 {attr("training", AttrType::Bool, AttrValue(false)), attr("momentum", AttrType::Float, AttrValue(0.1)),
                  attr("eps", AttrType::Float, AttrValue(1e-5))},
                 "batch_norm(input, weight, bias, running_mean, running_var, training=False, momentum=0.1, eps=1e-5)",
                 "batch normalization over dim 1; in training mode it updates the running stats (params)"));

  t.push_back(op("matmul", OpClass::Extern, 2, 2, T, {}, "matmul(self, other)", "matrix product with batch broadcasting"));
  t.push_back(op("linear", OpClass::Extern, 2, 3, T, {}, "linear(input, weight, bias=None)",
                 "input @ weight.T + bias; weight is [out_features, in_features]"));
  t.push_back(op("bmm", OpClass::Extern, 2, 2, T, {}, "bmm(self, mat2)", "batched matrix product of 3-d tensors"));
  t.push_back(op("conv2d", OpClass::Extern, 2, 3, T,
                 {attr("stride", AttrType::Stride2, AttrValue(int64_t{1})), attr("padding", AttrType::Stride2, AttrValue(int64_t{0})),
                  attr("dilation", AttrType::Stride2, AttrValue(int64_t{1})), attr("groups", AttrType::Int, AttrValue(int64_t{1}))},
                 "conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)",
                 "2-d convolution; input [N, C, H, W], weight [O, C/groups, kH, kW]"));
  t.push_back(op("max_pool2d", OpClass::Extern, 1, 1, T,
                 {required("kernel_size", AttrType::Stride2), attr("stride", AttrType::Stride2, std::nullopt, "kernel_size when absent"),
                  attr("padding", AttrType::Stride2, AttrValue(int64_t{0})), attr("dilation", AttrType::Stride2, AttrValue(int64_t{1})),
                  attr("ceil_mode", AttrType::Bool, AttrValue(false))},
                 "max_pool2d(self, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False)",
                 "2-d max pooling of [N, C, H, W] or [C, H, W]; ceil_mode rounds the output size up"));
  t.push_back(op("avg_pool2d", OpClass::Extern, 1, 1, T,
                 {required("kernel_size", AttrType::Stride2), attr("stride", AttrType::Stride2, std::nullopt, "kernel_size when absent"),
                  attr("padding", AttrType::Stride2, AttrValue(int64_t{0})), attr("ceil_mode", AttrType::Bool, AttrValue(false)),
                  attr("count_include_pad", AttrType::Bool, AttrValue(true)),
                  attr("divisor_override", AttrType::Int, std::nullopt, "the window's size when absent")},
                 "avg_pool2d(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None)",
                 "2-d average pooling of [N, C, H, W] or [C, H, W]"));
  t.push_back(op("adaptive_avg_pool2d", OpClass::Extern, 1, 1, T, {required("output_size", AttrType::Stride2)},
                 "adaptive_avg_pool2d(self, output_size)",
                 "2-d average pooling of [N, C, H, W] or [C, H, W] into output_size windows that cover the input"));
  t.push_back(op("addmm", OpClass::Extern, 3, 3, T,
                 {attr("beta", AttrType::Number, AttrValue(Scalar::from_int(1))),
                  attr("alpha", AttrType::Number, AttrValue(Scalar::from_int(1)))},
                 "addmm(self, mat1, mat2, beta=1, alpha=1)",
                 "beta * self + alpha * (mat1 @ mat2) for 2-d mat1 and mat2; self broadcasts to the product's shape"));
  t.push_back(op("baddbmm", OpClass::Extern, 3, 3, T,
                 {attr("beta", AttrType::Number, AttrValue(Scalar::from_int(1))),
                  attr("alpha", AttrType::Number, AttrValue(Scalar::from_int(1)))},
                 "baddbmm(self, batch1, batch2, beta=1, alpha=1)",
                 "beta * self + alpha * bmm(batch1, batch2) for 3-d batches; self broadcasts to the product's shape"));
  t.push_back(op("embedding", OpClass::Extern, 2, 2, T,
                 {attr("padding_idx", AttrType::Int, AttrValue(int64_t{-1}), "no effect on the forward pass")},
                 "embedding(weight, indices, padding_idx=-1)",
                 "rows of weight [num_embeddings, dim] picked by integer indices: indices.shape + [dim]"));

  t.push_back(op("aten", OpClass::Extern, 0, -1, T, {required("schema", AttrType::String)},
                 "aten(*tensors, schema, attrs={...})",
                 "any ATen operator by its full schema string, run through the dispatcher (an extern call in gbc); "
                 "args are its tensors, attrs its other arguments by name"));

  t.push_back(op("reshape", OpClass::View, 1, 1, T, {required("shape", AttrType::Shape)}, "reshape(self, shape)",
                 "new shape with the same number of elements; one entry may be -1"));
  t.push_back(op("permute", OpClass::View, 1, 1, T, {required("dims", AttrType::IntList)}, "permute(self, dims)",
                 "reorder dims"));
  t.push_back(op("transpose", OpClass::View, 1, 1, T, {required("dim0", AttrType::Int), required("dim1", AttrType::Int)},
                 "transpose(self, dim0, dim1)", "swap two dims"));
  t.push_back(op("expand", OpClass::View, 1, 1, T, {required("size", AttrType::Shape)}, "expand(self, size)",
                 "broadcast size-1 dims to size (-1 keeps a dim)"));
  t.push_back(op("squeeze", OpClass::View, 1, 1, T, {attr("dim", AttrType::Int)}, "squeeze(self, dim=None)",
                 "remove a size-1 dim (all of them when dim is absent)"));
  t.push_back(op("unsqueeze", OpClass::View, 1, 1, T, {required("dim", AttrType::Int)}, "unsqueeze(self, dim)",
                 "insert a size-1 dim"));
  t.push_back(op("slice", OpClass::View, 1, 1, T,
                 {attr("dim", AttrType::Int, AttrValue(int64_t{0})), attr("start", AttrType::Int, AttrValue(int64_t{0})),
                  attr("end", AttrType::Int, std::nullopt, "exclusive; the dim's end when absent"),
                  attr("step", AttrType::Int, AttrValue(int64_t{1}))},
                 "slice(self, dim=0, start=0, end=None, step=1)", "every step-th element of [start, end) along dim"));
  t.push_back(op("flatten", OpClass::View, 1, 1, T,
                 {attr("start_dim", AttrType::Int, AttrValue(int64_t{0})), attr("end_dim", AttrType::Int, AttrValue(int64_t{-1}))},
                 "flatten(self, start_dim=0, end_dim=-1)", "merge dims start_dim..end_dim into one"));
  t.push_back(op("cat", OpClass::Cat, 1, -1, T, {attr("dim", AttrType::Int, AttrValue(int64_t{0}))},
                 "cat(tensors, dim=0)", "concatenate along dim"));

  t.push_back(op("full", OpClass::Creation, 0, 0, T,
                 {required("shape", AttrType::Shape), required("value", AttrType::Number), attr("dtype", AttrType::DType)},
                 "full(shape, value, dtype=None)", "a tensor filled with value (dtype from value when absent)"));
  t.push_back(op("dropout", OpClass::Random, 1, 1, T,
                 {attr("p", AttrType::Float, AttrValue(0.5)), attr("training", AttrType::Bool, AttrValue(true))},
                 "dropout(input, p=0.5, training=True)", "zero elements with probability p and scale by 1/(1-p)"));

  {
    auto p = op("print", OpClass::Effect, 0, -1, T, {attr("message", AttrType::String, AttrValue(std::string()))},
                "print(*values, message='')", "side effect: print a message and values (compilers break the graph here)");
    p.produces_value = false;
    t.push_back(p);
  }
  t.push_back(op("item", OpClass::HostScalar, 1, 1, T, {}, "item(self)",
                 "a one-element tensor as a host number, usable as a scalar argument"));
  t.push_back(op("if", OpClass::Control, 1, 1, TN, {required("result", AttrType::String)},
                 "if(pred) then: [...] else: [...] result: id",
                 "data-dependent branch; both branches define the value named by result"));
  t.push_back(op("nonzero", OpClass::DataDependent, 1, 1, T, {}, "nonzero(self)",
                 "indices of non-zero elements, [count, rank] int64 (data-dependent shape)"));
  t.push_back(op("custom", OpClass::Custom, 1, -1, TN,
                 {required("name", AttrType::String), choice("meta", {"none", "same_as_input"}, "none")},
                 "custom(*args, name, meta=None)",
                 "a kernel from gbcheck's built-in registry; meta: same_as_input tells compilers its output type"));
  t.push_back(op("add_", OpClass::InPlace, 2, 2, TN, {}, "add_(self, other)", "in-place add into self"));
  t.push_back(op("mul_", OpClass::InPlace, 2, 2, TN, {}, "mul_(self, other)", "in-place multiply into self"));
  t.push_back(op("copy_", OpClass::InPlace, 2, 2, T, {}, "copy_(self, src)",
                 "writes src into self (broadcast to self's shape, cast to self's dtype)"));

  // OpId lists the same ops in the same order, so op_schema(id) is an index.
  GBC_INTERNAL_ASSERT(t.size() == kOpIdCount, "op_id.h lists " + std::to_string(kOpIdCount) + " ops, the schema table " +
                                                  std::to_string(t.size()));
  for (size_t i = 0; i < t.size(); ++i) {
    t[i].id = op_at_index(i);
    GBC_INTERNAL_ASSERT(op_name(t[i].id) == t[i].name,
                        "op_id.h names op " + std::to_string(i) + " '" + op_name(t[i].id) + "', the schema table '" +
                            t[i].name + "'");
  }
  return t;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

}  // namespace

const AttrSpec* OpSchema::find_attr(std::string_view attr_name) const {
  for (const auto& a : attrs)
    if (a.name == attr_name) return &a;
  return nullptr;
}

std::string_view attr_type_name(AttrType type) {
  switch (type) {
    case AttrType::Bool: return "bool";
    case AttrType::Int: return "int";
    case AttrType::Float: return "float";
    case AttrType::Number: return "number";
    case AttrType::String: return "string";
    case AttrType::IntList: return "int or list of ints";
    case AttrType::Shape: return "list of ints and dim names";
    case AttrType::DType: return "dtype";
    case AttrType::Stride2: return "int or list of two ints";
  }
  return "?";
}

const std::vector<OpSchema>& all_op_schemas() {
  static const std::vector<OpSchema> table = build_table();
  return table;
}

const OpSchema* find_op_schema(std::string_view name) {
  for (const auto& s : all_op_schemas())
    if (s.name == name) return &s;
  return nullptr;
}

const OpSchema* find_op_schema(OpId id) { return id == OpId::Unknown ? nullptr : &op_schema(id); }

const OpSchema& op_schema(OpId id) {
  GBC_INTERNAL_ASSERT(id != OpId::Unknown, "no schema for an unknown op");
  return all_op_schemas()[op_index(id)];
}

std::string closest_name(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  for (const auto& c : candidates) {
    size_t d = edit_distance(name, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  // Close means at most a third of the word is wrong.
  return best_distance <= std::max<size_t>(1, name.size() / 3) ? best : "";
}

std::string closest_op_name(std::string_view name) {
  std::vector<std::string> names;
  for (const auto& s : all_op_schemas()) names.push_back(s.name);
  return closest_name(name, names);
}

bool is_elementwise(OpClass cls) {
  return cls == OpClass::Unary || cls == OpClass::Binary || cls == OpClass::Where || cls == OpClass::Clamp ||
         cls == OpClass::Cast;
}

bool is_elementwise_op(OpId op) { return op != OpId::Unknown && is_elementwise(op_schema(op).cls); }

bool is_in_place_op(OpId op) { return op != OpId::Unknown && op_schema(op).cls == OpClass::InPlace; }

}  // namespace gbc
