// Conversions between the IR's types and ATen's.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>

#include <vector>

#include "compiler/ir/dim.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/graph.h"

namespace gbc {

at::ScalarType to_aten(DType dtype);
DType from_aten(at::ScalarType type);  // InternalError for types gbcheck does not model
c10::Scalar to_aten(const Scalar& s);
Scalar from_aten(const c10::Scalar& s);
/// A symbolic shape evaluated under bindings; InternalError when a dim is unbound.
std::vector<int64_t> concrete_shape(const SymShape& shape, const DimBindings& bindings);

}  // namespace gbc
