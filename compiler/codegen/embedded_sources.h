// The headers at the top of every generated kernel source, as they were when gbcheck was built
// (embedded by embed_sources.cmake, defined in the build folder's embedded_sources.cpp).
// Tests: tests/codegen/cpu_codegen_test.cpp.
#pragma once

#include <string_view>

namespace gbc::codegen {

std::string_view kernel_abi_h_source();       // compiler/kernel/kernel_abi.h
std::string_view kernel_std_h_source();       // compiler/codegen/kernel_std.h
std::string_view kernel_prelude_h_source();   // compiler/ir/kernel_prelude.h
std::string_view cuda_kernel_abi_h_source();  // compiler/codegen/cuda_kernel_abi.h
std::string_view kernel_support_h_source();   // compiler/codegen/kernel_support.h

}  // namespace gbc::codegen
