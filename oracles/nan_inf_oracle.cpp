#include "oracles/nan_inf_oracle.h"

#include <ATen/ATen.h>

namespace gbc {

Verdict nan_inf_oracle(const at::Tensor& expected, const at::Tensor& actual) {
  Verdict v;
  v.oracle = oracle_name::kNanInf;
  if (!at::isFloatingType(expected.scalar_type()) || !at::isFloatingType(actual.scalar_type())) return v;
  if (expected.sizes() != actual.sizes()) return v;  // the tolerance oracle reports shapes
  at::Tensor e = expected.detach().to(at::kCPU).reshape(-1);
  at::Tensor a = actual.detach().to(at::kCPU).reshape(-1);
  struct Kind {
    const char* name;
    at::Tensor e, a;
  };
  Kind kinds[] = {{"NaN", e.isnan(), a.isnan()}, {"+Inf", e.isposinf(), a.isposinf()}, {"-Inf", e.isneginf(), a.isneginf()}};
  std::string counts;
  int64_t first = -1;
  at::Tensor any_differ = at::zeros_like(kinds[0].e);
  for (auto& k : kinds) {
    at::Tensor differ = k.e.ne(k.a);
    any_differ = any_differ.logical_or(differ);
    const int64_t n = differ.sum().item<int64_t>();
    if (n == 0) continue;
    const int64_t lost = k.e.logical_and(k.a.logical_not()).sum().item<int64_t>();
    counts += std::string(counts.empty() ? "" : "; ") + k.name + " at " + std::to_string(lost) +
              " position(s) only in eager, " + std::to_string(n - lost) + " only in the compiled result";
    const int64_t idx = differ.to(at::kByte).argmax().item<int64_t>();
    if (first < 0 || idx < first) first = idx;
  }
  if (first < 0) return v;
  v.pass = false;
  const at::Tensor ed = e.to(at::kDouble), ad = a.to(at::kDouble);
  v.stats.numel = e.numel();
  v.stats.mismatched = any_differ.sum().item<int64_t>();
  v.stats.worst_index = unravel_index(first, expected.sizes().vec());
  v.stats.worst_expected = ed[first].item<double>();
  v.stats.worst_actual = ad[first].item<double>();
  v.why = "the NaN/Inf pattern differs: " + counts + "; first at " + index_str(v.stats.worst_index) + " (expected " +
          fmt_num(v.stats.worst_expected) + ", got " + fmt_num(v.stats.worst_actual) + ")";
  v.min_passing = "none: no tolerance accepts a different NaN/Inf pattern";
  return v;
}

}  // namespace gbc
