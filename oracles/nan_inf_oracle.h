// The NaN/Inf pattern oracle: the positions of NaN, of +Inf and of -Inf must be the same in the
// compiled result as in eager. It is exact, independent of tolerances and of the error statistic:
// a `max` that swallows a NaN is a bug even when a quantile statistic would hide the one element.
// Integer and bool tensors have no such values and always pass. Test: tests/oracles/.
#pragma once

#include <ATen/core/Tensor.h>

#include "oracles/verdict.h"

namespace gbc {

Verdict nan_inf_oracle(const at::Tensor& expected, const at::Tensor& actual);

}  // namespace gbc
