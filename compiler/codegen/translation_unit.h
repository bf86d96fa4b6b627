// What the CPU and CUDA code generators share around their kernels: a kernel's IR listing as a
// comment above its code, and the assembly of one translation unit per compiled graph (a first
// line naming the graph and the generator, the embedded headers, then every kernel).
// Tests: tests/codegen/cpu_codegen_test.cpp, tests/codegen/cuda_codegen_test.cpp.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/kernel/kernel_ir.h"

namespace gbc::codegen {

/// Every line of text behind `// `.
std::string as_comment(const std::string& text);

/// What a target puts into a translation unit.
struct TranslationUnitParts {
  std::string kind;       // the first line's words for the kernels: "CPU kernels", "CUDA kernels"
  std::string generator;  // the source file that generated them
  std::vector<std::string_view> headers;  // emitted verbatim, in order, before the kernels
  std::function<std::string(const kir::Kernel&)> kernel;  // one kernel's code
};

/// The translation unit of a graph's kernels. Kernel names must be distinct (an internal error
/// otherwise: they become the symbols the runtime looks up).
std::string assemble_translation_unit(const TranslationUnitParts& parts, const std::vector<kir::Kernel>& kernels,
                                      const std::string& graph_name);

}  // namespace gbc::codegen
