#include "oracles/determinism_oracle.h"

#include <ATen/ATen.h>

namespace gbc {
namespace {

// The same-sized integer type, so that comparing bits is comparing integers.
at::ScalarType bits_type(at::ScalarType t) {
  switch (c10::elementSize(t)) {
    case 1: return at::kByte;
    case 2: return at::kShort;
    case 4: return at::kInt;
    default: return at::kLong;
  }
}

}  // namespace

std::string BitwiseDiff::summary() const {
  if (equal) return "bit-identical";
  if (shape_differs) return "the runs differ in shape or dtype";
  return std::to_string(differing) + " element(s) differ bit for bit; first at " + index_str(first_index) + ": " +
         fmt_num(first_a) + " vs " + fmt_num(first_b) + " (largest difference " + fmt_num(max_abs) + ")";
}

BitwiseDiff bitwise_compare(const at::Tensor& a, const at::Tensor& b) {
  BitwiseDiff d;
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type()) {
    d.equal = false;
    d.shape_differs = true;
    return d;
  }
  if (a.numel() == 0) return d;
  at::Tensor ac = a.detach().to(at::kCPU).contiguous().reshape(-1);
  at::Tensor bc = b.detach().to(at::kCPU).contiguous().reshape(-1);
  const at::ScalarType bt = bits_type(a.scalar_type());
  at::Tensor differ = a.scalar_type() == at::kBool ? ac.ne(bc) : ac.view(bt).ne(bc.view(bt));
  if (at::isFloatingType(a.scalar_type())) differ = differ.logical_and(ac.isnan().logical_and(bc.isnan()).logical_not());
  d.differing = differ.sum().item<int64_t>();
  if (d.differing == 0) return d;
  d.equal = false;
  const int64_t first = differ.to(at::kByte).argmax().item<int64_t>();
  int64_t flat = first;
  d.first_index.assign(a.dim(), 0);
  for (int64_t i = a.dim(); i-- > 0;) {
    d.first_index[i] = flat % a.size(i);
    flat /= a.size(i);
  }
  at::Tensor ad = ac.to(at::kDouble), bd = bc.to(at::kDouble);
  d.first_a = ad[first].item<double>();
  d.first_b = bd[first].item<double>();
  at::Tensor diff = (ad - bd).abs();
  d.max_abs = at::where(diff.isfinite(), diff, at::zeros_like(diff)).max().item<double>();
  return d;
}

Verdict determinism_oracle(const at::Tensor& first, const at::Tensor& second) {
  Verdict v;
  v.oracle = oracle_name::kDeterminism;
  const BitwiseDiff d = bitwise_compare(first, second);
  if (d.equal) return v;
  v.pass = false;
  v.why = "nondeterministic: two runs on the same inputs and seed differ: " + d.summary();
  v.stats.numel = first.numel();
  v.stats.mismatched = d.differing;
  v.stats.max_abs = d.max_abs;
  v.stats.worst_index = d.first_index;
  v.stats.worst_expected = d.first_a;
  v.stats.worst_actual = d.first_b;
  v.min_passing = "none: determinism means bit-identical runs (atol " + fmt_upper(d.max_abs) +
                  " would hide it; switch the oracle off with check.oracle if the path is nondeterministic by design)";
  return v;
}

}  // namespace gbc
