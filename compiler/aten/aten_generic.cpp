#include "compiler/aten/aten_generic.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <ATen/core/stack.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>

#include <stdexcept>

#include "compiler/aten/aten_convert.h"
#include "compiler/aten/newer_aten_ops.h"
#include "compiler/ir/generic_op.h"

namespace gbc {
namespace {

[[noreturn]] void fail(const std::string& message) { throw std::invalid_argument(message); }

const c10::OperatorHandle& find_operator(const Node& node) {
  const std::string name = generic_op_name(node);
  const size_t dot = name.find('.');
  const std::string base = name.substr(0, dot);
  const std::string overload = dot == std::string::npos ? "" : name.substr(dot + 1);
  register_newer_aten_ops();  // a model imported from PyTorch 2.x may name one
  auto op = c10::Dispatcher::singleton().findSchema({base, overload});
  if (!op) fail("no ATen operator '" + name + "' in this LibTorch");
  // The handle lives as long as the dispatcher's registration: keep one copy per name.
  static thread_local std::map<std::string, c10::OperatorHandle> handles;
  return handles.emplace(name, *op).first->second;
}

// Builds the boxed stack: the schema's arguments in order, tensors from `tensors`, the others
// from the node's attributes (absent ones take the schema's default).
class StackBuilder {
 public:
  StackBuilder(const Node& node, const std::vector<at::Tensor>& tensors, c10::Device device)
      : node_(node), tensors_(tensors), device_(device) {}

  torch::jit::Stack build(const c10::FunctionSchema& schema) {
    torch::jit::Stack stack;
    for (const auto& arg : schema.arguments()) stack.push_back(argument(arg));
    if (next_ != tensors_.size())
      fail(std::to_string(tensors_.size()) + " tensor args given, the schema takes " + std::to_string(next_));
    return stack;
  }

 private:
  at::Tensor next_tensor(const std::string& name) {
    if (next_ >= tensors_.size()) fail("too few tensor args: '" + name + "' has none");
    return tensors_[next_++];
  }

  c10::IValue argument(const c10::Argument& arg) {
    const AttrValue* value = node_.attr(arg.name());
    const c10::TypePtr& type = arg.type();
    if (type->kind() == c10::TypeKind::TensorType) return next_tensor(arg.name());
    if (auto opt = type->cast<c10::OptionalType>()) {
      if (value && std::holds_alternative<NoneAttr>(*value)) return c10::IValue();
      if (opt->getElementType()->kind() == c10::TypeKind::TensorType) return next_tensor(arg.name());
      if (!value) return arg.default_value() ? *arg.default_value() : c10::IValue();
      return constant(arg, opt->getElementType(), *value);
    }
    if (auto list = type->cast<c10::ListType>()) {
      c10::TypePtr elem = list->getElementType();
      if (elem->kind() == c10::TypeKind::TensorType) {  // Tensor[]: attrs give the count
        int64_t count = value && std::holds_alternative<int64_t>(*value) ? std::get<int64_t>(*value) : -1;
        if (count < 0) fail("'" + arg.name() + "' (Tensor[]) needs its element count under attrs");
        c10::List<at::Tensor> l;
        for (int64_t i = 0; i < count; ++i) l.push_back(next_tensor(arg.name()));
        return l;
      }
      if (auto e = elem->cast<c10::OptionalType>(); e && e->getElementType()->kind() == c10::TypeKind::TensorType) {
        // Tensor?[] (index): attrs give one flag per element, 1 for a tensor, 0 for None.
        const auto* flags = value ? std::get_if<std::vector<int64_t>>(value) : nullptr;
        if (!flags) fail("'" + arg.name() + "' (Tensor?[]) needs a list of 0/1 flags under attrs");
        c10::List<c10::optional<at::Tensor>> l;
        for (int64_t f : *flags) l.push_back(f ? c10::optional<at::Tensor>(next_tensor(arg.name())) : c10::nullopt);
        return l;
      }
    }
    if (type->kind() == c10::TypeKind::DeviceObjType && (!value || std::holds_alternative<NoneAttr>(*value)))
      return device_;  // created tensors go where the graph runs
    if (!value) {
      if (arg.default_value()) return *arg.default_value();
      fail("argument '" + arg.name() + "' is missing from attrs");
    }
    return constant(arg, type, *value);
  }

  c10::IValue constant(const c10::Argument& arg, const c10::TypePtr& type, const AttrValue& value) {
    if (std::holds_alternative<NoneAttr>(value)) fail("argument '" + arg.name() + "' (" + type->str() + ") cannot be null");
    // A dtype written by name ("float32") is an int ScalarType in the boxed convention.
    if (auto s = std::get_if<std::string>(&value)) {
      if (type->kind() == c10::TypeKind::DeviceObjType) return c10::Device(*s);
      if (type->kind() == c10::TypeKind::IntType) {
        if (auto dt = parse_dtype(*s)) return static_cast<int64_t>(to_aten(*dt));
        fail("argument '" + arg.name() + "': '" + *s + "' is not a dtype");
      }
      return *s;
    }
    if (auto d = std::get_if<DType>(&value)) return static_cast<int64_t>(to_aten(*d));
    if (auto b = std::get_if<bool>(&value)) return *b;
    if (auto i = std::get_if<int64_t>(&value)) {
      if (type->kind() == c10::TypeKind::FloatType) return static_cast<double>(*i);
      if (type->kind() == c10::TypeKind::BoolType) return *i != 0;
      if (type->kind() == c10::TypeKind::ListType) return c10::List<int64_t>({*i});  // int[2] from one int
      return *i;
    }
    if (auto f = std::get_if<double>(&value)) return *f;
    if (auto s = std::get_if<Scalar>(&value)) return c10::IValue(to_aten(*s));
    if (auto l = std::get_if<std::vector<int64_t>>(&value)) {
      auto list = type->cast<c10::ListType>();
      if (list && list->getElementType()->kind() == c10::TypeKind::FloatType)
        return c10::List<double>(std::vector<double>(l->begin(), l->end()));
      if (list && list->getElementType()->kind() == c10::TypeKind::BoolType) {
        c10::List<bool> bools;
        for (int64_t x : *l) bools.push_back(x != 0);
        return bools;
      }
      return c10::List<int64_t>(*l);
    }
    if (auto l = std::get_if<std::vector<double>>(&value)) return c10::List<double>(*l);
    if (auto sh = std::get_if<SymShape>(&value)) {
      std::vector<int64_t> sizes;
      for (const auto& d : *sh) {
        if (!d.is_const()) fail("argument '" + arg.name() + "' holds a symbolic size");
        sizes.push_back(d.value());
      }
      return c10::List<int64_t>(sizes);
    }
    fail("argument '" + arg.name() + "': unsupported attribute value");
  }

  const Node& node_;
  const std::vector<at::Tensor>& tensors_;
  c10::Device device_;
  size_t next_ = 0;
};

std::vector<c10::IValue> call(const Node& node, const std::vector<at::Tensor>& tensors, c10::Device device) {
  const c10::OperatorHandle& op = find_operator(node);
  torch::jit::Stack stack = StackBuilder(node, tensors, device).build(op.schema());
  op.callBoxed(&stack);
  return stack;
}

// Results in node order: each returned value, a Tensor[] flattened. An undefined tensor (the
// attention weights _native_multi_head_attention skips when need_weights is false) is an empty
// float32 tensor, the format having no undefined value.
template <typename F>
void for_each_result(const std::vector<c10::IValue>& results, c10::Device device, F&& f) {
  for (const auto& r : results) {
    if (r.isTensorList()) {
      for (const at::Tensor& t : r.toTensorList().vec()) f(c10::IValue(t));
    } else if (r.isTensor() && !r.toTensor().defined()) {
      f(c10::IValue(at::empty({0}, at::TensorOptions().dtype(at::kFloat).device(device))));
    } else {
      f(r);
    }
  }
}

std::vector<ValueType> result_types(const std::vector<c10::IValue>& results, const Graph& graph,
                                    std::vector<std::vector<int64_t>>* sizes) {
  std::vector<ValueType> types;
  for_each_result(results, c10::Device(c10::DeviceType::Meta), [&](const c10::IValue& r) {
    if (r.isTensor()) {
      const at::Tensor& t = r.toTensor();
      types.push_back(ValueType::tensor(from_aten(t.scalar_type()), {}));
      sizes->push_back(t.sizes().vec());
    } else if (r.isInt() || r.isDouble() || r.isBool()) {
      types.push_back(ValueType::scalar(r.isInt() ? ScalarKind::Int : r.isDouble() ? ScalarKind::Float : ScalarKind::Bool));
      sizes->emplace_back();
    } else {
      fail("returns a " + r.tagKind() + ", which the model format cannot hold");
    }
  });
  return types;
}

// One run at concrete sizes: meta tensors, or zeros on the CPU where the operator has no meta kernel.
std::vector<c10::IValue> call_on_placeholders(const Graph& graph, const Node& node, const DimBindings& bindings) {
  for (c10::Device device : {c10::Device(c10::DeviceType::Meta), c10::Device(c10::DeviceType::CPU)}) {
    std::vector<at::Tensor> tensors;
    for (const Arg& a : node.args) {
      const ValueType& t = graph.type(a.value);
      auto options = at::TensorOptions().dtype(to_aten(t.dtype)).device(device);
      std::vector<int64_t> sizes = concrete_shape(t.shape, bindings);
      tensors.push_back(device.is_meta() ? at::empty(sizes, options) : at::zeros(sizes, options));
    }
    try {
      return call(node, tensors, device);
    } catch (const c10::Error& e) {
      if (!device.is_meta()) {
        std::string msg = e.what_without_backtrace();
        fail(msg.substr(0, msg.find('\n')));
      }
    }
  }
  fail("unreachable");
}

}  // namespace

std::vector<RtValue> run_generic_op(const Node& node, const std::vector<RtValue>& args, c10::Device device) {
  std::vector<at::Tensor> tensors;
  for (const RtValue& a : args) {
    if (a.is_scalar()) fail("a generic op's args are tensors");
    tensors.push_back(a.tensor);
  }
  std::vector<RtValue> out;
  for_each_result(call(node, tensors, device), device, [&](const c10::IValue& r) {
    if (r.isTensor()) out.push_back(RtValue::of(r.toTensor()));
    else if (r.isInt()) out.push_back(RtValue::of(Scalar::from_int(r.toInt())));
    else if (r.isDouble()) out.push_back(RtValue::of(Scalar::from_float(r.toDouble())));
    else if (r.isBool()) out.push_back(RtValue::of(Scalar::from_bool(r.toBool())));
    else fail("returns a " + r.tagKind() + ", which the model format cannot hold");
  });
  return out;
}

std::vector<ValueType> infer_generic_op_types(const Graph& graph, const Node& node) {
  std::set<std::string> symbols;
  for (const Arg& a : node.args)
    for (const auto& d : graph.type(a.value).shape) d.collect_symbols(symbols);
  std::vector<DimBindings> samples = symbols.empty() ? std::vector<DimBindings>{DimBindings{}} : graph.dims.samples();
  std::vector<ValueType> types;
  std::vector<std::vector<std::vector<int64_t>>> sizes_at(samples.size());  // [sample][result][dim]
  for (size_t s = 0; s < samples.size(); ++s) {
    std::vector<ValueType> t = result_types(call_on_placeholders(graph, node, samples[s]), graph, &sizes_at[s]);
    if (s == 0) types = t;
    else if (t.size() != types.size()) fail("the number of results depends on the input sizes");
  }
  // Each result dim: the same size at every sample, or the size of one input dim at every sample.
  for (size_t r = 0; r < types.size(); ++r) {
    if (!types[r].is_tensor()) continue;
    const size_t rank = sizes_at[0][r].size();
    for (size_t k = 0; k < rank; ++k) {
      std::optional<DimExpr> dim;
      bool constant = true;
      for (size_t s = 0; s < samples.size(); ++s) {
        if (sizes_at[s][r].size() != rank) fail("the rank of result " + std::to_string(r) + " depends on the input sizes");
        constant = constant && sizes_at[s][r][k] == sizes_at[0][r][k];
      }
      if (constant) dim = DimExpr(sizes_at[0][r][k]);
      for (const auto& sym : symbols) {
        if (dim) break;
        bool follows = true;
        for (size_t s = 0; s < samples.size() && follows; ++s) follows = samples[s].at(sym) == sizes_at[s][r][k];
        if (follows) dim = DimExpr::symbol(sym);
      }
      if (!dim)
        fail("dim " + std::to_string(k) + " of result " + std::to_string(r) +
             " depends on the symbolic sizes in a way the model cannot express; import with fixed sizes");
      types[r].shape.push_back(*dim);
    }
  }
  return types;
}

GenericOpEffects generic_op_effects_of_schema(const Node& node) {
  GenericOpEffects e;
  const c10::OperatorHandle* op = nullptr;
  try {
    op = &find_operator(node);
  } catch (const std::invalid_argument&) {
    return e;  // an unknown operator is reported when the node is typed
  }
  const c10::FunctionSchema& schema = op->schema();
  e.mutates = schema.is_mutable();
  e.random = op->hasTag(at::Tag::nondeterministic_seeded);
  for (const c10::Argument& a : schema.arguments())  // older LibTorch tags fewer random ops
    e.random = e.random || a.type()->str().find("Generator") != std::string::npos;
  for (const c10::Argument& r : schema.returns()) e.returns_alias = e.returns_alias || r.alias_info() != nullptr;
  return e;
}

namespace {
// The IR's loader and passes type generic nodes, and learn their effects, through this file
// whenever ATen is linked in.
const bool typer_registered = [] {
  set_generic_op_typer(infer_generic_op_types);
  set_generic_op_effects_reader(generic_op_effects_of_schema);
  return true;
}();
}  // namespace

}  // namespace gbc
