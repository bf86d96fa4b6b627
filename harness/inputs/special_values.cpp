#include "harness/inputs/special_values.h"

#include <cmath>
#include <limits>

namespace gbc {

const char* special_kind_name(SpecialKind kind) {
  switch (kind) {
    case SpecialKind::NaN: return "nan";
    case SpecialKind::PosInf: return "inf";
    case SpecialKind::NegInf: return "-inf";
    case SpecialKind::PosZero: return "0";
    case SpecialKind::NegZero: return "-0";
    case SpecialKind::PosSubnormal: return "subnormal";
    case SpecialKind::NegSubnormal: return "-subnormal";
    case SpecialKind::PosHuge: return "huge";
    case SpecialKind::NegHuge: return "-huge";
    case SpecialKind::RangeLow: return "low";
    case SpecialKind::RangeHigh: return "high";
  }
  return "?";
}

double dtype_max(DType dtype) {
  switch (dtype) {
    case DType::Float16: return 65504.0;
    case DType::BFloat16: return 3.3895313892515355e38;
    case DType::Float32: return static_cast<double>(std::numeric_limits<float>::max());
    default: return std::numeric_limits<double>::max();
  }
}

double dtype_min_normal(DType dtype) {
  switch (dtype) {
    case DType::Float16: return 6.103515625e-05;
    case DType::BFloat16:
    case DType::Float32: return static_cast<double>(std::numeric_limits<float>::min());
    default: return std::numeric_limits<double>::min();
  }
}

std::vector<SpecialKind> special_kinds_for(DType dtype, const ValueDist& dist) {
  using K = SpecialKind;
  const bool bounded = dist.kind == ValueDist::Kind::Uniform || dist.kind == ValueDist::Kind::Int;
  if (dtype == DType::Bool || (!bounded && dist.kind != ValueDist::Kind::Normal)) return {};
  const double inf = std::numeric_limits<double>::infinity();
  const double low = bounded ? dist.a : -inf, high = bounded ? dist.b : inf;
  if (dist.kind == ValueDist::Kind::Int || !is_floating(dtype)) {
    std::vector<K> kinds = {K::RangeLow, K::RangeHigh};
    if (low < 0 && high > 0) kinds.push_back(K::PosZero);
    return kinds;
  }
  std::vector<K> kinds;
  if (!bounded) kinds.push_back(K::NaN);  // a bounded range excludes NaN by definition
  if (high == inf) kinds.push_back(K::PosInf);
  if (low == -inf) kinds.push_back(K::NegInf);
  if (low <= 0 && high >= 0) {
    kinds.push_back(K::PosZero);
    kinds.push_back(K::NegZero);
  }
  const double tiny = dtype_min_normal(dtype), max = dtype_max(dtype);
  if (low <= 0 && high >= tiny) kinds.push_back(K::PosSubnormal);
  if (low <= -tiny && high >= 0) kinds.push_back(K::NegSubnormal);
  if (high >= max) kinds.push_back(K::PosHuge);
  if (low <= -max) kinds.push_back(K::NegHuge);
  return kinds;
}

double special_value(SpecialKind kind, DType dtype, const ValueDist& dist, Rng& rng) {
  // Subnormals: a random fraction of the smallest normal; huge: 0.5 to 0.99 of the largest finite
  // value (not 1.0: rounding a float32 draw to bfloat16 or float16 must not reach Inf).
  const double frac = 0.01 + 0.98 * rng.uniform();
  switch (kind) {
    case SpecialKind::NaN: return std::numeric_limits<double>::quiet_NaN();
    case SpecialKind::PosInf: return std::numeric_limits<double>::infinity();
    case SpecialKind::NegInf: return -std::numeric_limits<double>::infinity();
    case SpecialKind::PosZero: return 0.0;
    case SpecialKind::NegZero: return -0.0;
    case SpecialKind::PosSubnormal: return dtype_min_normal(dtype) * frac;
    case SpecialKind::NegSubnormal: return -dtype_min_normal(dtype) * frac;
    case SpecialKind::PosHuge: return dtype_max(dtype) * (0.5 + 0.49 * rng.uniform());
    case SpecialKind::NegHuge: return -dtype_max(dtype) * (0.5 + 0.49 * rng.uniform());
    case SpecialKind::RangeLow: return std::ceil(dist.a);
    case SpecialKind::RangeHigh: return std::floor(dist.b);
  }
  return 0.0;
}

}  // namespace gbc
