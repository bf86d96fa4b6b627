// Conversions between the IR's dtypes, numbers and shapes and ATen's. Kept in one place so every
// torch-using stage (eager reference, compiled paths, oracles) maps types the same way.
#include "compiler/aten/aten_convert.h"

#include "compiler/ir/diagnostics.h"

namespace gbc {

at::ScalarType to_aten(DType dtype) {
  switch (dtype) {
    case DType::Bool: return at::kBool;
    case DType::UInt8: return at::kByte;
    case DType::Int8: return at::kChar;
    case DType::Int16: return at::kShort;
    case DType::Int32: return at::kInt;
    case DType::Int64: return at::kLong;
    case DType::Float16: return at::kHalf;
    case DType::BFloat16: return at::kBFloat16;
    case DType::Float32: return at::kFloat;
    case DType::Float64: return at::kDouble;
  }
  internal_error("to_aten: unknown DType " + std::to_string(static_cast<int>(dtype)));
}

DType from_aten(at::ScalarType type) {
  switch (type) {
    case at::kBool: return DType::Bool;
    case at::kByte: return DType::UInt8;
    case at::kChar: return DType::Int8;
    case at::kShort: return DType::Int16;
    case at::kInt: return DType::Int32;
    case at::kLong: return DType::Int64;
    case at::kHalf: return DType::Float16;
    case at::kBFloat16: return DType::BFloat16;
    case at::kFloat: return DType::Float32;
    case at::kDouble: return DType::Float64;
    default: break;
  }
  internal_error(std::string("from_aten: ATen dtype ") + c10::toString(type) + " has no gbcheck equivalent");
}

c10::Scalar to_aten(const Scalar& s) {
  switch (s.kind) {
    case ScalarKind::Bool: return c10::Scalar(s.b);
    case ScalarKind::Int: return c10::Scalar(s.i);
    case ScalarKind::Float: return c10::Scalar(s.f);
  }
  internal_error("to_aten: unknown ScalarKind");
}

Scalar from_aten(const c10::Scalar& s) {
  if (s.isBoolean()) return Scalar::from_bool(s.toBool());
  if (s.isIntegral(/*includeBool=*/false)) return Scalar::from_int(s.toLong());
  if (s.isFloatingPoint()) return Scalar::from_float(s.toDouble());
  internal_error("from_aten: complex or symbolic scalars have no gbcheck equivalent");
}

std::vector<int64_t> concrete_shape(const SymShape& shape, const DimBindings& bindings) {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const auto& d : shape) {
    auto v = d.eval(bindings);
    if (!v) internal_error("concrete_shape: " + shape_str(shape) + " has a dim with no binding (" + d.str() + ")");
    out.push_back(*v);
  }
  return out;
}

}  // namespace gbc
