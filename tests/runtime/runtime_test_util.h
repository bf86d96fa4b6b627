// Shared by the runtime tests: models from inline YAML, a backend of gbc's ladder prepared with a
// model's check: options, inputs of chosen sizes, and the compile events a backend recorded.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compiler/aten/aten_convert.h"
#include "compiler/aten/eager_executor.h"
#include "compiler/backends/backend.h"
#include "harness/model/model_loader.h"
#include "harness/runner/check_runner.h"
#include "tests/support/load_model.h"

namespace gbc::test {

using gbc::testing::load;

/// The backend options a check of `model` would use (its check: section), with a sink for prints.
inline BackendOptions options_of(const Model& model, std::ostream* print_sink = nullptr) {
  BackendOptions o = run_options_from_model(model).backend_options;
  o.print_sink = print_sink;
  return o;
}

inline std::unique_ptr<Backend> prepared(const std::string& backend, const Model& model, const BackendOptions& o) {
  std::unique_ptr<Backend> b = make_backend(backend);
  EXPECT_NE(b, nullptr) << backend;
  b->prepare(model.graph, o);
  return b;
}

/// Inputs in graph order with the given dim sizes; float tensors are standard normal.
inline std::vector<at::Tensor> inputs_for(const Graph& g, const DimBindings& dims, uint64_t seed = 3) {
  at::manual_seed(seed);
  std::vector<at::Tensor> out;
  for (const GraphInput& in : g.inputs) {
    const ValueType& t = g.type(in.value);
    out.push_back(at::randn(concrete_shape(t.shape, dims), at::TensorOptions().dtype(to_aten(t.dtype))));
  }
  return out;
}

inline std::vector<at::Tensor> clones(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& t : ts) out.push_back(t.clone());
  return out;
}

/// Runs `backend` and eager on copies of `inputs`; outputs and inputs after the run must agree.
inline void expect_matches_eager(Backend& backend, const Graph& g, const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> eager_in = clones(inputs), compiled_in = clones(inputs);
  std::vector<at::Tensor> expected = run_eager(g, eager_in);
  std::vector<at::Tensor> actual = backend.run(compiled_in);
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_TRUE(at::allclose(actual[i], expected[i], 1e-5, 1e-6)) << backend.name() << ": output " << i;
  for (size_t i = 0; i < inputs.size(); ++i)
    EXPECT_TRUE(at::allclose(compiled_in[i], eager_in[i], 1e-5, 1e-6)) << backend.name() << ": input " << i;
}

inline std::vector<CompileEvent> events_of(const BackendStats& stats, CompileEvent::Kind kind) {
  std::vector<CompileEvent> out;
  for (const CompileEvent& e : stats.events)
    if (e.kind == kind) out.push_back(e);
  return out;
}

}  // namespace gbc::test
