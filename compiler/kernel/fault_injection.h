// Deliberate compiler bugs, a testing aid for gbcheck itself (docs/debugging.md#fault-injection):
// with `--inject-fault KIND` gbc miscompiles in one known way, so that the check, reduce, bisect
// and repro commands can be shown to catch, shrink, locate and package a real-looking bug. Each
// kind lives where such a bug would live in a real compiler (lowering, layout specialization, the
// reduction loops of the interpreter and the code generator, the generated code), and reaches it
// through kir::Kernel::fault, so the kernel listing names it. Off unless the command line asks.
// No torch. Test: tests/faults/faults_test.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gbc {

enum class InjectedFault : uint8_t {
  None, Const, Broadcast, ReduceBound, NanDrop, Fp16Accum, Crash, Assert, GuardDtype, GuardLayout
};

struct FaultKind {
  InjectedFault fault;
  const char* name;     // what --inject-fault takes
  const char* summary;  // one line: the bug
  const char* where;    // the file that holds it
  bool interpreted;     // gbc-interp has it too (false: only gbc's generated code)
};

/// Every kind but None, in the order `gbcheck --inject-fault list` prints them.
const std::vector<FaultKind>& fault_kinds();
/// nullopt for an unknown name; "" is InjectedFault::None.
std::optional<InjectedFault> parse_fault(const std::string& name);
const FaultKind* find_fault(InjectedFault fault);
std::string fault_name(InjectedFault fault);

/// The op kind whose generated code dereferences a null pointer under InjectedFault::Crash.
inline constexpr const char* kCrashFaultOp = "sigmoid";
/// The op kind whose lowering into a fused kernel fails an internal assertion under
/// InjectedFault::Assert (the compiler's own bug: the check reports it as internal-error).
inline constexpr const char* kAssertFaultOp = "tanh";

}  // namespace gbc
