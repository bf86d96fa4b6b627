// What flows between ops at run time: a tensor, or a host scalar (the result of `item`).
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

#include "compiler/ir/graph.h"

namespace gbc {

struct RtValue {
  at::Tensor tensor;
  std::optional<Scalar> scalar;

  static RtValue of(at::Tensor t) { return RtValue{std::move(t), std::nullopt}; }
  static RtValue of(Scalar s) { return RtValue{at::Tensor(), s}; }
  bool is_scalar() const { return scalar.has_value(); }
};

}  // namespace gbc
