#include "compiler/runtime/param_cache.h"

#include <utility>

#include "compiler/ir/diagnostics.h"

namespace gbc {

ParamCache::ParamCache(std::vector<ValueId> sources, std::vector<ValueId> results)
    : source_ids_(std::move(sources)), result_ids_(std::move(results)) {}

bool ParamCache::TensorState::trackable(const at::Tensor& t) { return t.defined() && !t.is_inference(); }

ParamCache::TensorState ParamCache::TensorState::of(const at::Tensor& t) {
  return {t, t.data_ptr(), t.sizes().vec(), t.strides().vec(), t.scalar_type(), t.device(), t._version()};
}

bool ParamCache::TensorState::unchanged(const at::Tensor& t) const {
  // The version last: a tensor that is another impl may be an inference tensor without one.
  return t.unsafeGetTensorImpl() == tensor.unsafeGetTensorImpl() && t.data_ptr() == data && t.sizes() == sizes &&
         t.strides() == strides && t.scalar_type() == dtype && t.device() == device && t._version() == version;
}

bool ParamCache::valid(const std::vector<RtValue>& env, const DimBindings& dims) const {
  if (!filled_ || dims != dims_) return false;
  for (size_t i = 0; i < source_ids_.size(); ++i) {
    const RtValue& v = env[static_cast<size_t>(source_ids_[i])];
    if (v.is_scalar() || !sources_[i].unchanged(v.tensor)) return false;
  }
  for (size_t i = 0; i < results_.size(); ++i)
    if (!results_[i].is_scalar() && results_[i].tensor._version() != result_versions_[i]) return false;
  return true;
}

void ParamCache::restore(std::vector<RtValue>& env) const {
  GBC_INTERNAL_ASSERT(filled_, "param cache: restore without results");
  for (size_t i = 0; i < result_ids_.size(); ++i) env[static_cast<size_t>(result_ids_[i])] = results_[i];
}

bool ParamCache::snapshot_sources(const std::vector<RtValue>& env, const DimBindings& dims) {
  filled_ = false;
  sources_.clear();
  results_.clear();
  result_versions_.clear();
  for (ValueId id : source_ids_) {
    const RtValue& v = env[static_cast<size_t>(id)];
    if (v.is_scalar() || !TensorState::trackable(v.tensor)) {
      sources_.clear();
      return false;
    }
    sources_.push_back(TensorState::of(v.tensor));
  }
  dims_ = dims;
  return true;
}

void ParamCache::keep_results(const std::vector<RtValue>& env) {
  GBC_INTERNAL_ASSERT(sources_.size() == source_ids_.size(), "param cache: results without a snapshot of their sources");
  for (ValueId id : result_ids_) {
    const RtValue& v = env[static_cast<size_t>(id)];
    GBC_INTERNAL_ASSERT(v.is_scalar() || v.tensor.defined(), "param cache: a param-only result was not computed");
    if (!v.is_scalar() && !TensorState::trackable(v.tensor)) {
      results_.clear();
      result_versions_.clear();
      return;
    }
    results_.push_back(v);
    result_versions_.push_back(v.is_scalar() ? 0 : v.tensor._version());
  }
  filled_ = true;
}

}  // namespace gbc
