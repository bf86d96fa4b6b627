// Helpers shared by the compiler/aten tests: models from inline YAML, deterministic inputs drawn
// from each input's `values:` spec, and exact tensor comparison (NaN equal to NaN).
#pragma once

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/Formatting.h>
#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/bernoulli.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/full.h>
#include <ATen/ops/isnan.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "compiler/aten/aten_convert.h"
#include "compiler/aten/eager_executor.h"
#include "harness/model/model_loader.h"
#include "tests/support/load_model.h"

namespace gbc::testing {

/// "format/name/inputs/graph/outputs" around the given sections, so each test shows only what
/// matters. `inputs` and `graph` are YAML block bodies indented by two spaces.
inline std::string model_text(const std::string& inputs, const std::string& graph, const std::string& outputs,
                              const std::string& extra = "") {
  return "format: gbcheck/v1\nname: t\n" + extra + "inputs:\n" + inputs + "graph:\n" + graph + "outputs: " + outputs + "\n";
}


/// Draws one tensor from a ValueDist with a private generator (the global one stays untouched,
/// so dropout tests control it alone).
inline at::Tensor draw(const ValueDist& dist, DType dtype, const std::vector<int64_t>& shape, uint64_t seed) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  at::TensorOptions f64 = at::TensorOptions().dtype(at::kDouble);
  at::Tensor t;
  switch (dist.kind) {
    case ValueDist::Kind::Normal: t = at::randn(shape, gen, f64) * dist.b + dist.a; break;
    case ValueDist::Kind::Uniform: t = at::rand(shape, gen, f64) * (dist.b - dist.a) + dist.a; break;
    case ValueDist::Kind::Int:
      t = at::randint(static_cast<int64_t>(dist.a), static_cast<int64_t>(dist.b) + 1, shape, gen,
                      at::TensorOptions().dtype(at::kLong));
      break;
    case ValueDist::Kind::Bernoulli: t = at::bernoulli(at::full(shape, dist.a, f64), gen); break;
    case ValueDist::Kind::Const: t = at::full(shape, dist.a, f64); break;
  }
  return t.to(to_aten(dtype));
}

/// Inputs then params, in graph order, with `bindings` giving the sizes of symbolic dims.
inline std::vector<at::Tensor> make_inputs(const Model& m, const DimBindings& bindings = {}, uint64_t seed = 1) {
  std::vector<at::Tensor> out;
  for (const TensorSpec* s : m.all_tensor_specs())
    out.push_back(draw(s->dist, s->dtype, concrete_shape(s->shape, bindings), seed + out.size()));
  return out;
}

/// Exact equality: same dtype, same sizes, same values, NaN equal to NaN.
inline ::testing::AssertionResult same(const at::Tensor& got, const at::Tensor& want) {
  if (!got.defined() || !want.defined()) return ::testing::AssertionFailure() << "undefined tensor";
  if (got.scalar_type() != want.scalar_type())
    return ::testing::AssertionFailure() << "dtype " << got.scalar_type() << " vs " << want.scalar_type();
  if (got.sizes() != want.sizes()) return ::testing::AssertionFailure() << "sizes " << got.sizes() << " vs " << want.sizes();
  bool equal = at::equal(got, want);
  if (!equal && c10::isFloatingType(got.scalar_type())) {
    at::Tensor both_nan = at::isnan(got).logical_and(at::isnan(want));
    equal = (got.eq(want).logical_or(both_nan)).all().item<bool>();
  }
  if (!equal) return ::testing::AssertionFailure() << "values differ:\n" << got << "\nvs\n" << want;
  return ::testing::AssertionSuccess();
}

}  // namespace gbc::testing
