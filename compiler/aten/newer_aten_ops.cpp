#include "compiler/aten/newer_aten_ops.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/all.h>
#include <ATen/ops/any.h>
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/dropout.h>
#include <ATen/ops/log.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/softmax.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>

namespace gbc {
namespace {

using OptionalTensor = c10::optional<at::Tensor>;

// A boolean mask as an additive one: 0 where attending, -inf where not (PyTorch's
// convert_boolean_attn_mask); a float mask is added as it is. log(1) = 0 and log(0) = -inf exactly,
// and log runs on meta tensors, where LibTorch 1.13's where and masked_fill do not.
OptionalTensor additive_mask(const OptionalTensor& mask, c10::ScalarType dtype) {
  if (!mask || mask->scalar_type() != at::kBool) return mask;
  return at::log(mask->to(dtype));
}

// at::_safe_softmax (2.5): a row whose every score is -inf (fully masked) gives zeros, not NaN.
// Clamping -inf to the lowest finite value changes no other row (both exponentiate to 0) and makes
// a fully masked row uniform, which the product with "some key attended" then zeroes.
at::Tensor safe_softmax(const at::Tensor& scores) {
  const double lowest = scores.scalar_type() == at::kDouble ? std::numeric_limits<double>::lowest()
                                                            : static_cast<double>(std::numeric_limits<float>::lowest());
  at::Tensor attended_rows = at::any(scores.ne(-std::numeric_limits<double>::infinity()), -1, /*keepdim=*/true);
  return at::softmax(at::clamp_min(scores, lowest), -1) * attended_rows;
}

// repeat_interleave(t, groups, -3) as a view and a copy, which meta tensors run too (LibTorch 1.13's
// repeat_interleave has no meta kernel).
at::Tensor repeat_heads(const at::Tensor& t, int64_t groups) {
  std::vector<int64_t> expanded = t.sizes().vec(), merged = t.sizes().vec();
  expanded.insert(expanded.end() - 2, groups);
  merged[merged.size() - 3] *= groups;
  return t.unsqueeze(-3).expand(expanded).reshape(merged);
}

// PyTorch 2.6's _scaled_dot_product_attention_math: query and key each scaled by sqrt(scale)
// before the product (for range), the mask added, a safe softmax, dropout, the product with value.
// 2.x's CPU kernel is a blocked (flash) one: its results differ from this by rounding.
at::Tensor scaled_dot_product_attention(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                                        const OptionalTensor& attn_mask, double dropout_p, bool is_causal,
                                        c10::optional<double> scale, bool enable_gqa) {
  TORCH_CHECK(!(is_causal && attn_mask), "scaled_dot_product_attention: explicit attn_mask should not be set when is_causal=True");
  const bool negative = scale && *scale < 0;
  const double s = std::sqrt(scale ? std::abs(*scale) : 1.0 / std::sqrt(static_cast<double>(query.size(-1))));
  const at::Tensor q = query * (negative ? -s : s);
  OptionalTensor mask = additive_mask(attn_mask, query.scalar_type());
  if (is_causal)
    mask = additive_mask(at::ones({query.size(-2), key.size(-2)}, query.options().dtype(at::kBool)).tril(),
                         query.scalar_type());
  at::Tensor k = key, v = value;
  if (enable_gqa && query.dim() >= 3 && key.size(-3) != query.size(-3)) {
    TORCH_CHECK(query.size(-3) % key.size(-3) == 0, "scaled_dot_product_attention: the query's heads are not a multiple of the key's");
    k = repeat_heads(key, query.size(-3) / key.size(-3));
    v = repeat_heads(value, query.size(-3) / value.size(-3));
  }
  at::Tensor scores = at::matmul(q, k.transpose(-2, -1) * s);
  if (mask) scores = scores + *mask;
  at::Tensor attn = safe_softmax(scores);
  if (dropout_p > 0.0) attn = at::dropout(attn, dropout_p, /*train=*/true);
  return at::matmul(attn, v);
}

std::vector<int64_t> wrapped_dims(const at::Tensor& self, at::IntArrayRef dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(c10::maybe_wrap_dim(d, self.dim()));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// rms_norm (2.4): computed in the op math type (float for half and bfloat16), eps defaulting to that
// type's epsilon, the result cast back before the weight multiplies it.
at::Tensor rms_norm(const at::Tensor& input, at::IntArrayRef normalized_shape, const OptionalTensor& weight,
                    c10::optional<double> eps) {
  const int64_t n = static_cast<int64_t>(normalized_shape.size());
  TORCH_CHECK(n <= input.dim() && input.sizes().slice(input.dim() - n).equals(normalized_shape),
              "rms_norm: normalized_shape ", normalized_shape, " does not end the input's shape ", input.sizes());
  if (weight) TORCH_CHECK(weight->sizes().equals(normalized_shape), "rms_norm: weight shape ", weight->sizes(),
                          " is not normalized_shape ", normalized_shape);
  const bool reduced = input.scalar_type() == at::kHalf || input.scalar_type() == at::kBFloat16;
  const at::Tensor x = reduced ? input.to(at::kFloat) : input;
  const double e = eps ? *eps
                       : (x.scalar_type() == at::kDouble ? std::numeric_limits<double>::epsilon()
                                                          : static_cast<double>(std::numeric_limits<float>::epsilon()));
  std::vector<int64_t> dims;
  for (int64_t i = input.dim() - n; i < input.dim(); ++i) dims.push_back(i);
  at::Tensor result = (x * at::rsqrt(x.pow(2).mean(dims, /*keepdim=*/true) + e)).to(input.scalar_type());
  return weight ? result * *weight : result;
}

// squeeze.dims (2.0): squeezes each listed dim of size 1, leaves the others; a view.
at::Tensor squeeze_dims(const at::Tensor& self, at::IntArrayRef dim) {
  std::vector<int64_t> dims = wrapped_dims(self, dim);
  at::Tensor out = self;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it)
    if (out.size(*it) == 1) out = out.squeeze(*it);
  return out;
}

// all.dims / any.dims (2.2): one reduction over several dims; none or an empty list reduces all.
template <bool kAll>
at::Tensor reduce_dims(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim) {
  std::vector<int64_t> dims;
  if (dim && !dim->empty()) dims = wrapped_dims(self, *dim);
  else for (int64_t i = 0; i < self.dim(); ++i) dims.push_back(i);
  if (self.dim() == 0) return kAll ? at::all(self) : at::any(self);
  at::Tensor out = self;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it)
    out = kAll ? at::all(out, *it, /*keepdim=*/keepdim) : at::any(out, *it, /*keepdim=*/keepdim);
  return out;
}

struct NewerOp {
  const char* name;      // "aten::rms_norm"
  const char* overload;  // "" or "dims"
  const char* schema;    // PyTorch 2.x's (SymInt[] written int[], which LibTorch 1.13 takes)
  void (*define)(torch::Library&, const char* schema);  // defines it with its kernel
};

const NewerOp kNewerOps[] = {
    {"aten::scaled_dot_product_attention", "",
     "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., "
     "bool is_causal=False, *, float? scale=None, bool enable_gqa=False) -> Tensor",
     [](torch::Library& lib, const char* schema) { lib.def(schema, TORCH_FN(scaled_dot_product_attention)); }},
    {"aten::rms_norm", "", "rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor",
     [](torch::Library& lib, const char* schema) { lib.def(schema, TORCH_FN(rms_norm)); }},
    {"aten::squeeze", "dims", "squeeze.dims(Tensor(a) self, int[] dim) -> Tensor(a)",
     [](torch::Library& lib, const char* schema) { lib.def(schema, TORCH_FN(squeeze_dims)); }},
    {"aten::all", "dims", "all.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
     [](torch::Library& lib, const char* schema) { lib.def(schema, TORCH_FN(reduce_dims<true>)); }},
    {"aten::any", "dims", "any.dims(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor",
     [](torch::Library& lib, const char* schema) { lib.def(schema, TORCH_FN(reduce_dims<false>)); }},
};

std::vector<std::string>& registered() {
  static std::vector<std::string> names;
  return names;
}


}  // namespace

void register_newer_aten_ops() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The library must outlive every use of its operators: it is never destroyed.
    static torch::Library* lib = nullptr;
    for (const NewerOp& op : kNewerOps) {
      if (c10::Dispatcher::singleton().findSchema({op.name, op.overload})) continue;
      if (!lib) lib = new torch::Library(torch::Library::FRAGMENT, "aten", c10::nullopt, __FILE__, __LINE__);
      op.define(*lib, op.schema);
      registered().push_back(std::string(op.name) + (*op.overload ? std::string(".") + op.overload : ""));
    }
  });
}

const std::vector<std::string>& newer_aten_ops_registered() { return registered(); }

}  // namespace gbc
