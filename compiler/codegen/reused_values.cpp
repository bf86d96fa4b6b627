#include "compiler/codegen/reused_values.h"

#include <string>

namespace gbc::codegen {

bool costly_op(const kir::Expr& e) {
  static const std::set<std::string> ops = {"exp",  "log",       "log1p", "expm1", "tanh", "sigmoid", "erf",
                                            "gelu", "gelu_tanh", "silu",  "sin",   "cos",  "pow"};
  return e.kind == kir::ExprKind::Op && ops.count(e.op) > 0;
}

bool costly(const kir::Expr& e) {
  if (costly_op(e)) return true;
  for (const kir::ExprPtr& a : e.args)
    if (costly(*a)) return true;
  return false;
}

void collect(const kir::ExprPtr& e, std::set<const kir::Expr*>& out) {
  if (!out.insert(e.get()).second) return;
  for (const kir::ExprPtr& a : e->args) collect(a, out);
}

std::vector<ReusedValue> values_read_by_later_passes(const kir::Kernel& kernel, CEmitter& em) {
  std::vector<ReusedValue> out;
  std::set<const kir::Expr*> taken;
  for (size_t k = 0; k < kernel.stages.size(); ++k) {
    std::set<const kir::Expr*> later;
    for (size_t j = k + 1; j < kernel.stages.size(); ++j) collect(kernel.stages[j].value, later);
    for (const kir::Store& st : kernel.stores)
      if (kernel.buffers.at(static_cast<size_t>(st.buffer)).level == kir::Level::Full) collect(st.value, later);
    std::vector<kir::ExprPtr> worklist = {kernel.stages[k].value};
    while (!worklist.empty()) {
      kir::ExprPtr e = worklist.back();
      worklist.pop_back();
      if (e->kind != kir::ExprKind::Op && e->kind != kir::ExprKind::Cast) continue;
      if (em.depth(e) < Scope::Element || taken.count(e.get())) continue;
      if (later.count(e.get()) && costly(*e)) {
        taken.insert(e.get());
        out.push_back({e, k});
        continue;
      }
      worklist.insert(worklist.end(), e->args.begin(), e->args.end());
    }
  }
  return out;
}

}  // namespace gbc::codegen
