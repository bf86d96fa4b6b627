// The error statistic an aggregate check is made on (`check.error_stat`, as in Polygraphy's
// --check-error-stat): elementwise (every element must be close), or the max, mean or a quantile
// of the per-element errors. Used by the tolerance and fp64 oracles. Test: tests/oracles/.
#pragma once

#include <optional>
#include <string>

#include "compiler/aten/tensor_fwd.h"

namespace gbc {

struct ErrorStat {
  enum class Kind { Elementwise, Max, Mean, Quantile };
  Kind kind = Kind::Elementwise;
  double quantile = 0.99;  // with Kind::Quantile, in (0, 1]

  /// From `check.error_stat` and `check.quantile`; nullopt for an unknown name.
  static std::optional<ErrorStat> parse(const std::string& name, double quantile);
  /// "elementwise", "max", "mean", "quantile 0.99".
  std::string str() const;
};

/// The statistic of a tensor of non-negative per-element errors (any shape, any floating dtype;
/// +inf allowed, NaN is not): max, mean, or the quantile with numpy's linear interpolation.
/// Elementwise reduces to the max. 0 for an empty tensor.
double reduce_errors(const at::Tensor& errors, const ErrorStat& stat);

}  // namespace gbc
