// The programs of a repro folder, generated as text from the model's TorchScript form
// (compiler/backends/torchscript_emitter.h) and the manifest of saved tensors:
//   repro.py        plain PyTorch: the graph as a Python function, eager against torch.compile,
//                   and eager against the outputs the failing backend produced (saved);
//   repro.cpp       LibTorch: eager (the TorchScript interpreter without graph optimization, op by
//                   op) against NNC (the same source with the TensorExpr fuser, profiled) when the
//                   failing backend is nnc, otherwise against the saved outputs;
//   CMakeLists.txt  builds repro.cpp against LibTorch (find_package(Torch)).
// Pure string work. Test: tests/repro/repro_test.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "compiler/backends/torchscript_emitter.h"

namespace gbc {

/// TorchScript's integer dtype codes (`.to(6)`, `dtype=6`) spelled as torch dtypes, for Python.
std::string python_dtypes(const std::string& torchscript_source);

/// `manifest` is the folder's manifest.json (tensor_files.h entries under inputs, expected,
/// observed; backend; per-output tolerances).
std::string repro_py(const TorchScriptProgram& program, const nlohmann::json& manifest);
std::string repro_cpp(const TorchScriptProgram& program, const nlohmann::json& manifest);
std::string repro_cmake();

}  // namespace gbc
