// Reductions on ATen: sum mean amax amin prod var logsumexp argmax.
//
// An absent `dim` (or an empty list) means every dim, as torch.sum(x) does. ATen's prod takes a
// single dim, so a list is reduced one dim at a time, highest first, which is what a PyTorch user
// has to write and keeps the remaining dim indices valid when keepdim is false.
#include <ATen/ops/amax.h>
#include <ATen/ops/amin.h>
#include <ATen/ops/argmax.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/prod.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/var.h>

#include <algorithm>
#include <numeric>

#include "compiler/aten/aten_ops_internal.h"

namespace gbc::aten_detail {
namespace {

std::vector<int64_t> all_dims(int64_t rank) {
  std::vector<int64_t> dims(static_cast<size_t>(rank));
  std::iota(dims.begin(), dims.end(), int64_t{0});
  return dims;
}

at::Tensor prod(const at::Tensor& x, bool all, std::vector<int64_t> dims, bool keepdim) {
  if (all && !keepdim) return at::prod(x);
  if (all) dims = all_dims(x.dim());
  if (dims.empty()) return at::prod(x);  // keepdim over a 0-d tensor keeps it 0-d
  // Out-of-range dims are left as written so ATen reports them in its own words.
  int64_t rank = std::max<int64_t>(x.dim(), 1);
  for (auto& d : dims)
    if (d < 0 && d >= -rank) d += rank;
  std::sort(dims.begin(), dims.end(), std::greater<int64_t>());
  at::Tensor out = x;
  for (int64_t d : dims) out = at::prod(out, d, keepdim);
  return out;
}

}  // namespace

at::Tensor run_reduction(const OpCall& c) {
  const at::Tensor& x = c.tensor(0);
  const OpId op = c.op();
  bool keepdim = c.node.attr_bool("keepdim", false);
  if (op == OpId::Argmax) {
    if (c.node.has_attr("dim")) return at::argmax(x, c.node.attr_int("dim", 0), keepdim);
    return at::argmax(x, c10::nullopt, keepdim);
  }
  auto listed = c.node.attr_int_list("dim");
  bool all = !listed || listed->empty();
  std::vector<int64_t> dims = all ? std::vector<int64_t>{} : *listed;
  // sum, mean and var take an optional list where nullopt means every dim (torch.sum(x)).
  at::OptionalIntArrayRef opt_dims = all ? at::OptionalIntArrayRef() : at::OptionalIntArrayRef(at::IntArrayRef(dims));
  if (op == OpId::Sum) return at::sum(x, opt_dims, keepdim);
  if (op == OpId::Mean) return at::mean(x, opt_dims, keepdim);
  if (op == OpId::Var) {
    int64_t correction = c.node.attr_int("correction", 1);
    // LibTorch 1.13 takes an optional<int64_t> correction, 2.x an optional<Scalar>; the optional
    // converts to either.
    return at::var(x, opt_dims, c10::optional<int64_t>(correction), keepdim);
  }
  // amax and amin read an empty list as every dim.
  if (op == OpId::Amax) return at::amax(x, dims, keepdim);
  if (op == OpId::Amin) return at::amin(x, dims, keepdim);
  if (op == OpId::Logsumexp) return at::logsumexp(x, all ? all_dims(x.dim()) : dims, keepdim);
  if (op == OpId::Prod) return prod(x, all, dims, keepdim);
  internal_error("aten: '" + op_name(op) + "' is not a reduction");
}

}  // namespace gbc::aten_detail
