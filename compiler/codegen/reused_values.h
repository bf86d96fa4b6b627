// Values of a reduction kernel that one pass over a row computes and later passes read again
// (softmax's exp(x - max): folded by the sum's pass, then divided in the store pass). Both code
// generators compute them once per element and keep them between the passes: the CPU in a row
// cache in scratch memory (cpu_codegen.cpp), CUDA's Cached schedule in the registers of an input
// that no later pass reads (cuda_codegen.cpp). Only costly values are kept (a transcendental
// somewhere in them): recomputing a subtraction costs less than the memory or registers.
// Tests: tests/codegen/cpu_codegen_test.cpp, tests/codegen/cuda_emulation_test.cpp.
#pragma once

#include <set>
#include <vector>

#include "compiler/codegen/c_emitter.h"
#include "compiler/kernel/kernel_ir.h"

namespace gbc::codegen {

/// An elementwise op that costs many instructions (exp, log, tanh, erf, ...).
bool costly_op(const kir::Expr& e);
/// Whether e applies a costly op anywhere.
bool costly(const kir::Expr& e);
/// e and every expression it reads, into out.
void collect(const kir::ExprPtr& e, std::set<const kir::Expr*>& out);

struct ReusedValue {
  kir::ExprPtr value;
  size_t stage = 0;  // the pass that computes it first
};

/// The costly per-element values of each stage's folded expression that a later stage or a
/// Full-level store reads again; only the outermost such value of each expression, each value
/// once. `em` gives the depths (only per-element values qualify).
std::vector<ReusedValue> values_read_by_later_passes(const kir::Kernel& kernel, CEmitter& em);

}  // namespace gbc::codegen
