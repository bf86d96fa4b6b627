// run_aten_node: one IR node on ATen. Dispatches on the op's class to the family files, runs the
// ops that touch the host itself (item, print, nonzero), and turns every failure ATen raises into
// an OpError carrying the node's source location, so a data-dependent failure (a bad reshape, an
// integer division by zero) is reported like a model error instead of crashing the harness.
#include <ATen/ScalarOps.h>
#include <ATen/ops/nonzero.h>
#include <c10/util/Exception.h>

#include <cmath>
#include <iomanip>
#include <sstream>

#include "compiler/aten/aten_convert.h"
#include "compiler/aten/aten_generic.h"
#include "compiler/aten/aten_ops_internal.h"
#include "compiler/ir/generic_op.h"
#include "compiler/aten/eager_executor.h"
#include "compiler/ir/op_schema.h"

namespace gbc {
namespace aten_detail {

bool OpCall::is_number(size_t i) const {
  GBC_INTERNAL_ASSERT(i < args.size(), op_name(node.op) + ": argument " + std::to_string(i) + " is missing");
  return args[i].is_scalar();
}

const at::Tensor& OpCall::tensor(size_t i) const {
  if (is_number(i))
    fail("argument " + std::to_string(i + 1) + " (" + args[i].scalar->str() + ") must be a tensor");
  GBC_INTERNAL_ASSERT(args[i].tensor.defined(), op_name(node.op) + ": argument " + std::to_string(i) + " has no value");
  return args[i].tensor;
}

c10::Scalar OpCall::number(size_t i) const {
  GBC_INTERNAL_ASSERT(is_number(i), op_name(node.op) + ": argument " + std::to_string(i) + " is not a number");
  return to_aten(*args[i].scalar);
}

at::Tensor OpCall::tensor_or_wrapped(size_t i) const {
  return is_number(i) ? wrapped_number(number(i), device()) : tensor(i);
}

std::vector<at::Tensor> OpCall::tensors() const {
  std::vector<at::Tensor> out;
  out.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) out.push_back(tensor(i));
  return out;
}

c10::Device OpCall::device() const {
  for (const auto& a : args)
    if (!a.is_scalar() && a.tensor.defined()) return a.tensor.device();
  return device_;
}

std::vector<int64_t> OpCall::shape_attr(const std::string& name) const {
  auto shape = node.attr_shape(name);
  if (!shape) fail("needs " + name);
  return concrete_shape(*shape, bindings);
}

void OpCall::fail(const std::string& message) const { throw OpError(node, message); }

at::Tensor wrapped_number(const c10::Scalar& s, c10::Device device) {
  // What ATen's wrapped_scalar_tensor does: a double/int64/bool 0-d tensor flagged as a wrapped
  // number, which type promotion ranks below every tensor of the same category.
  at::Tensor t = c10::scalar_to_tensor(s, device);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

}  // namespace aten_detail

namespace {

using aten_detail::OpCall;

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// Python's repr-like text of one element: integers exactly, floats with 6 significant digits.
std::string element_str(const at::Tensor& flat, int64_t i) {
  at::Tensor e = flat[i];
  if (flat.scalar_type() == at::kBool) return e.item<bool>() ? "true" : "false";
  if (!c10::isFloatingType(flat.scalar_type())) return std::to_string(e.item<int64_t>());
  double v = e.item<double>();
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream ss;
  ss << std::setprecision(6) << v;
  return ss.str();
}

// "float32[2, 3] [0.5, 1, 1.5, 2, 2.5, 3]": enough to recognize a value in a side-effect log
// without dumping large tensors.
std::string tensor_summary(const at::Tensor& t) {
  constexpr int64_t kShown = 6;
  std::vector<int64_t> sizes(t.sizes().begin(), t.sizes().end());
  std::string s = std::string(dtype_name(from_aten(t.scalar_type()))) + shape_str(const_shape(sizes)) + " [";
  at::Tensor flat = t.detach().reshape({-1}).cpu();
  int64_t n = flat.numel();
  for (int64_t i = 0; i < std::min(n, kShown); ++i) s += (i ? ", " : "") + element_str(flat, i);
  if (n > kShown) s += ", ...";
  return s + "]";
}

void print_node(const Graph& graph, const Node& node, const std::vector<RtValue>& args, std::ostream* sink) {
  if (!sink) return;
  std::string line = node.attr_string("message", "");
  for (size_t i = 0; i < args.size(); ++i) {
    std::string text = args[i].is_scalar() ? args[i].scalar->str() : tensor_summary(args[i].tensor);
    std::string name = node.args[i].is_value() ? graph.name_of(node.args[i].value) + "=" : "";
    line += (line.empty() ? "" : " ") + name + text;
  }
  *sink << line << '\n';
}

// Python's `t.item()`: a number of the tensor's kind (half and bfloat16 come back as floats).
Scalar item(const OpCall& c) {
  const at::Tensor& t = c.tensor(0);
  c10::Scalar s = t.item();
  switch (scalar_kind_of(from_aten(t.scalar_type()))) {
    case ScalarKind::Bool: return Scalar::from_bool(s.toBool());
    case ScalarKind::Int: return Scalar::from_int(s.toLong());
    case ScalarKind::Float: return Scalar::from_float(s.toDouble());
  }
  internal_error("item: unknown scalar kind");
}

at::Tensor nonzero(const OpCall& c) {
  at::Tensor out = at::nonzero(c.tensor(0));
  // The count is a data-dependent dim (u0): later shapes that mention it need its value.
  ValueId v = c.node.output();
  if (v != kNoValue) {
    const ValueType& type = c.graph.type(v);
    if (type.is_tensor() && !type.shape.empty() && type.shape[0].is_symbol())
      c.bindings[type.shape[0].name()] = out.size(0);
  }
  return out;
}

std::vector<RtValue> dispatch(const Graph& graph, const Node& node, const std::vector<RtValue>& args,
                              const OpCall& call, std::ostream* print_sink) {
  const OpSchema* schema = find_op_schema(node.op);
  GBC_INTERNAL_ASSERT(schema != nullptr, "no schema for op '" + op_name(node.op) + "'");
  if (is_generic_op(node)) return run_generic_op(node, args, call.device());
  switch (schema->cls) {
    case OpClass::Unary:
    case OpClass::Binary:
    case OpClass::Where:
    case OpClass::Clamp:
    case OpClass::Cast:
    case OpClass::InPlace: return {RtValue::of(aten_detail::run_elementwise(call))};
    case OpClass::Reduction: return {RtValue::of(aten_detail::run_reduction(call))};
    case OpClass::Normalization:
    case OpClass::Extern:
    case OpClass::Random:
    case OpClass::Custom: return {RtValue::of(aten_detail::run_nn(call))};
    case OpClass::View:
    case OpClass::Cat:
    case OpClass::Creation: return {RtValue::of(aten_detail::run_shape(call))};
    case OpClass::DataDependent: return {RtValue::of(nonzero(call))};
    case OpClass::HostScalar: return {RtValue::of(item(call))};
    case OpClass::Effect: print_node(graph, node, args, print_sink); return {};
    case OpClass::Control: break;
  }
  internal_error("run_aten_node: '" + op_name(node.op) + "' needs its blocks; run it with run_block");
}

}  // namespace

std::vector<RtValue> run_aten_node(const Graph& graph, const Node& node, const std::vector<RtValue>& args,
                                   DimBindings& bindings, std::ostream* print_sink, c10::Device device) {
  OpCall call(graph, node, args, bindings, device);
  try {
    return dispatch(graph, node, args, call, print_sink);
  } catch (const OpError&) {
    throw;
  } catch (const InternalError&) {
    throw;
  } catch (const c10::Error& e) {
    // ATen's message without the C++ backtrace; its first line says what went wrong.
    throw OpError(node, first_line(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw OpError(node, first_line(e.what()));
  }
}

}  // namespace gbc
