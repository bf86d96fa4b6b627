#include "compiler/ir/dtype.h"

#include <array>

namespace gbc {
namespace {

struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::string_view c_type;
  int size;
};

constexpr std::array<DTypeInfo, 10> kInfo = {{
    {DType::Bool, "bool", "bool", 1},
    {DType::UInt8, "uint8", "uint8_t", 1},
    {DType::Int8, "int8", "int8_t", 1},
    {DType::Int16, "int16", "int16_t", 2},
    {DType::Int32, "int32", "int32_t", 4},
    {DType::Int64, "int64", "int64_t", 8},
    {DType::Float16, "float16", "uint16_t", 2},
    {DType::BFloat16, "bfloat16", "uint16_t", 2},
    {DType::Float32, "float32", "float", 4},
    {DType::Float64, "float64", "double", 8},
}};

const DTypeInfo& info(DType dtype) { return kInfo[static_cast<size_t>(dtype)]; }

int category(DType dtype) {
  if (dtype == DType::Bool) return 0;
  return is_floating(dtype) ? 2 : 1;
}

}  // namespace

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> all = [] {
    std::vector<DType> v;
    for (const auto& i : kInfo) v.push_back(i.dtype);
    return v;
  }();
  return all;
}

std::string_view dtype_name(DType dtype) { return info(dtype).name; }
std::string_view dtype_c_type(DType dtype) { return info(dtype).c_type; }
int dtype_size(DType dtype) { return info(dtype).size; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& i : kInfo)
    if (i.name == name) return i.dtype;
  if (name == "float" ) return DType::Float32;
  if (name == "double") return DType::Float64;
  if (name == "half") return DType::Float16;
  if (name == "long") return DType::Int64;
  if (name == "int") return DType::Int32;
  return std::nullopt;
}

bool is_floating(DType d) {
  return d == DType::Float16 || d == DType::BFloat16 || d == DType::Float32 || d == DType::Float64;
}
bool is_integral(DType d) { return !is_floating(d) && d != DType::Bool; }

bool is_reduced_float(DType d) { return d == DType::Float16 || d == DType::BFloat16; }

DType compute_dtype(DType d) { return is_reduced_float(d) ? DType::Float32 : d; }

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  int ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  if (ca == 2) {
    if ((a == DType::Float16 && b == DType::BFloat16) || (a == DType::BFloat16 && b == DType::Float16))
      return DType::Float32;
    return dtype_size(a) >= dtype_size(b) ? a : b;
  }
  // Integral: uint8 mixes with signed types by widening the signed one enough to hold 0..255.
  if (a == DType::UInt8 || b == DType::UInt8) {
    DType other = a == DType::UInt8 ? b : a;
    return other == DType::Int8 ? DType::Int16 : other;
  }
  return dtype_size(a) >= dtype_size(b) ? a : b;
}

std::string_view scalar_kind_name(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::Bool: return "bool";
    case ScalarKind::Int: return "int";
    case ScalarKind::Float: return "float";
  }
  return "?";
}

DType scalar_kind_default_dtype(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::Bool: return DType::Bool;
    case ScalarKind::Int: return DType::Int64;
    case ScalarKind::Float: return DType::Float32;  // torch's default dtype
  }
  return DType::Float32;
}

ScalarKind scalar_kind_of(DType dtype) {
  if (dtype == DType::Bool) return ScalarKind::Bool;
  return is_floating(dtype) ? ScalarKind::Float : ScalarKind::Int;
}

DType result_type(const std::vector<PromotionOperand>& operands) {
  // ATen keeps three running results and lets a lower-priority one win only when its category is
  // higher (c10/core/ScalarType.h, TensorIterator's compute_types).
  std::optional<DType> dim_result, zero_result, number_result;
  auto merge = [](std::optional<DType>& acc, DType d) { acc = acc ? promote_types(*acc, d) : d; };
  for (const auto& op : operands) {
    switch (op.rank) {
      case PromotionOperand::Rank::Dimensioned: merge(dim_result, op.dtype); break;
      case PromotionOperand::Rank::ZeroDim: merge(zero_result, op.dtype); break;
      case PromotionOperand::Rank::Number: {
        // A number contributes only its category: float numbers give the default float dtype.
        DType d = op.dtype;
        if (is_floating(d)) d = DType::Float32;
        merge(number_result, d);
        break;
      }
    }
  }
  // c10's combine_categories: a lower-priority result only matters when it is of a higher category.
  auto combine = [](std::optional<DType> higher, std::optional<DType> lower) -> std::optional<DType> {
    if (!higher) return lower;
    if (!lower) return higher;
    if (is_floating(*higher)) return higher;
    if (*higher == DType::Bool || is_floating(*lower)) return promote_types(*higher, *lower);
    return higher;
  };
  std::optional<DType> result = combine(dim_result, combine(zero_result, number_result));
  return result.value_or(DType::Float32);
}

}  // namespace gbc
