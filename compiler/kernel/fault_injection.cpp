#include "compiler/kernel/fault_injection.h"

namespace gbc {

const std::vector<FaultKind>& fault_kinds() {
  static const std::vector<FaultKind> kinds = {
      {InjectedFault::Const, "const", "the number operand of a fused add/sub/mul/div is off by 2^-7 (relative)",
       "compiler/kernel/lower.cpp", true},
      {InjectedFault::Broadcast, "broadcast",
       "a broadcast input also gets stride 0 in every dim after its first broadcast dim (reads one element)",
       "compiler/kernel/specialize.cpp", true},
      {InjectedFault::ReduceBound, "reduce-bound", "reduction stages fold r in [0, inner - 1): the last element is skipped",
       "compiler/kernel/interpreter.cpp, compiler/codegen/cpu_codegen.cpp", true},
      {InjectedFault::NanDrop, "nan-drop", "maximum/minimum and amax/amin drop NaN (a compare-and-select instead of NaN-propagating)",
       "compiler/kernel/lower.cpp", true},
      {InjectedFault::Fp16Accum, "fp16-accum", "floating sum accumulators are rounded to float16 after every step",
       "compiler/kernel/interpreter.cpp, compiler/codegen/cpu_codegen.cpp", true},
      {InjectedFault::Crash, "crash", "generated code of kernels that compute sigmoid writes through a null pointer (SIGSEGV)",
       "compiler/codegen/cpu_codegen.cpp", false},
      {InjectedFault::Assert, "assert", "lowering a fused kernel that computes tanh fails an internal assertion (an exception)",
       "compiler/kernel/lower.cpp", true},
      {InjectedFault::GuardDtype, "guard-dtype",
       "guards ignore dtypes: an entry compiled for one input dtype serves calls with another",
       "compiler/runtime/guards.cpp", true},
      {InjectedFault::GuardLayout, "guard-layout",
       "guards ignore strides: an entry and its kernels compiled for one layout (contiguous, transposed, ...) serve calls with another",
       "compiler/runtime/guards.cpp, compiler/runtime/kernel_region.cpp", true},
  };
  return kinds;
}

std::optional<InjectedFault> parse_fault(const std::string& name) {
  if (name.empty()) return InjectedFault::None;
  for (const FaultKind& k : fault_kinds())
    if (name == k.name) return k.fault;
  return std::nullopt;
}

const FaultKind* find_fault(InjectedFault fault) {
  for (const FaultKind& k : fault_kinds())
    if (k.fault == fault) return &k;
  return nullptr;
}

std::string fault_name(InjectedFault fault) {
  const FaultKind* k = find_fault(fault);
  return k ? k->name : "none";
}

}  // namespace gbc
