// rewrite_if (check.rewrite_if: true): an `if` whose branches are free of side effects becomes
// both branches followed by `where(cond, then_result, else_result)`, the torch.where rewrite that
// removes a data-dependent graph break (GB003). Both branches then run every time; `where` picks
// the values, so a NaN in the branch not taken cannot leak. Nested ifs are rewritten first.
// Branches with print, item, nonzero, in-place ops, random ops, batch_norm in training mode,
// custom kernels without meta, or an if that stays, are left alone with the reason, and so is an
// `if` whose result is later mutated in place (where returns a new tensor, not the branch's).
// Runs on the model's graph before the capture splits it. Tests: tests/runtime/capture_test.cpp.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace gbc {

struct IfRewriteResult {
  Graph graph;
  std::vector<SourceLoc> rewritten;           // the ifs turned into where, program order
  std::map<ValueId, std::string> refusals;    // per remaining if (by its result): why it stayed
};

IfRewriteResult rewrite_pure_ifs(const Graph& graph);

}  // namespace gbc
