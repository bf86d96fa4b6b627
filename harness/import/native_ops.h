// Which ATen operators import as the model format's own ops (fusable by gbc): one table keyed by
// the operator's name and overload ("aten::add.Tensor"), each rule naming the format's op, the
// schema arguments passed as args, those that become attributes, and arguments that must hold a
// given constant for the semantics to match (alpha=1, dtype=None), and attributes it implies. Every other operator, or one
// whose constants differ, imports as a generic `aten` op. Test: tests/import/torchscript_import_test.cpp.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "compiler/ir/graph.h"

namespace gbc {

struct NativeRule {
  std::string op;
  /// Schema arguments passed as args, in order; a trailing '?' marks an optional tensor that,
  /// when None, ends the list (linear's bias).
  std::vector<std::string> args;
  /// schema argument -> the format's attribute; a None value leaves the attribute out.
  std::vector<std::pair<std::string, std::string>> attrs;
  /// schema argument -> the constant it must hold, as an IValue prints ("1", "None", "False").
  std::vector<std::pair<std::string, std::string>> require;
  /// The format's attributes the ATen op implies (adaptive_avg_pool2d to 1x1 is a mean over H, W).
  std::map<std::string, AttrValue> fixed = {};
  /// A schema argument whose dtype and shape the ATen op's result always has; where the format's
  /// op would give another (promotion, broadcasting), the rule does not apply. Empty: no such check.
  std::string keeps_type_of = {};
};

/// The table, by "aten::NAME" or "aten::NAME.OVERLOAD": the rules to try in order (the first whose
/// constants and types fit applies; adaptive_avg_pool2d to 1x1 is a mean, to other sizes its own op).
const std::map<std::string, std::vector<NativeRule>>& native_rules();

}  // namespace gbc
