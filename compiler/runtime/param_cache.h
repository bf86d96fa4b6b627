// The results of a region's param-only steps (param_steps.h), kept between calls together with what
// they were computed from, so that a call reuses them only when they cannot be stale: every source
// param is the very tensor of then (same TensorImpl, held here so that its address cannot be
// reused by another tensor), with the same data pointer, sizes, strides, dtype and device, and its
// version counter has not moved (no in-place write since, through any view); every kept result is
// unwritten (its own version counter, which its views share); and the call binds the same
// symbolic dims. Inference tensors have no version counter: a call with one recomputes.
// Tests: tests/runtime/param_fold_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "compiler/aten/runtime_value.h"
#include "compiler/ir/graph.h"

namespace gbc {

class ParamCache {
 public:
  ParamCache(std::vector<ValueId> sources, std::vector<ValueId> results);

  /// Whether the kept results are those the param-only steps would compute now from `env`.
  bool valid(const std::vector<RtValue>& env, const DimBindings& dims) const;
  /// Puts the kept results into `env`; only after valid().
  void restore(std::vector<RtValue>& env) const;

  /// Records the sources as the param-only steps are about to read them; false when they cannot be
  /// tracked (an inference tensor), in which case nothing is kept from this call.
  bool snapshot_sources(const std::vector<RtValue>& env, const DimBindings& dims);
  /// Keeps the results the call computed from the last snapshot.
  void keep_results(const std::vector<RtValue>& env);

  /// What a kept value was computed from: the tensor, and what an in-place write or a new tensor
  /// in its place would change (also what extern_call.h keys oneDNN's packed conv weights on).
  struct TensorState {
    at::Tensor tensor;  // held: its TensorImpl cannot be freed and reused by another tensor
    const void* data = nullptr;
    std::vector<int64_t> sizes, strides;
    at::ScalarType dtype = at::kFloat;
    c10::Device device = c10::Device(c10::kCPU);
    int64_t version = 0;

    static bool trackable(const at::Tensor& t);
    static TensorState of(const at::Tensor& t);
    bool unchanged(const at::Tensor& t) const;
  };

 private:

  std::vector<ValueId> source_ids_, result_ids_;
  std::vector<TensorState> sources_;
  std::vector<RtValue> results_;
  std::vector<int64_t> result_versions_;  // per result; unused for host scalars
  DimBindings dims_;
  bool filled_ = false;  // results_ belong to sources_
};

}  // namespace gbc
