#include "oracles/signed_zero_oracle.h"

#include <ATen/ATen.h>

namespace gbc {

Verdict signed_zero_oracle(const at::Tensor& expected, const at::Tensor& actual) {
  Verdict v;
  v.oracle = oracle_name::kSignedZero;
  if (!at::isFloatingType(expected.scalar_type()) || expected.scalar_type() != actual.scalar_type()) return v;
  if (expected.sizes() != actual.sizes()) return v;  // the tolerance oracle reports shapes
  at::Tensor e = expected.detach().to(at::kCPU).reshape(-1);
  at::Tensor a = actual.detach().to(at::kCPU).reshape(-1);
  const at::Tensor differ = e.eq(0).logical_and(a.eq(0)).logical_and(e.signbit().ne(a.signbit()));
  const int64_t n = differ.sum().item<int64_t>();
  if (n == 0) return v;
  const int64_t first = differ.to(at::kByte).argmax().item<int64_t>();
  const bool eager_negative = e[first].signbit().item<bool>();
  v.pass = false;
  v.stats.numel = e.numel();
  v.stats.mismatched = n;
  v.stats.worst_index = unravel_index(first, expected.sizes().vec());
  v.stats.worst_expected = eager_negative ? -0.0 : 0.0;
  v.stats.worst_actual = eager_negative ? 0.0 : -0.0;
  v.why = "a zero of the other sign at " + std::to_string(n) + " element(s) (IEEE 754 pins the sign here); first at " +
          index_str(v.stats.worst_index) + " (expected " + (eager_negative ? "-0" : "0") + ", got " +
          (eager_negative ? "0" : "-0") + ")";
  v.min_passing = "none: no tolerance accepts a zero of the other sign";
  return v;
}

}  // namespace gbc
