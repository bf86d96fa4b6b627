// `gbcheck import`'s core: a TorchScript file (torch.jit.trace or torch.jit.script, PyTorch 1.13 to
// 2.x) into a Model whose params hold the module's trained weights. LibTorch loads, freezes (keeping
// batch_norm as eager runs it: no conv-bn folding), inlines, removes mutation where alias analysis
// allows and propagates constants; then one walk over the graph, as torch-mlir's node_importer does,
// turns each node into a native op (native_ops.h), a generic `aten` op, or folds it (constants, lists,
// tuples, shape arithmetic, shape checks). Each node keeps its Python source line as its origin.
// The import's fidelity is checked at once: the TorchScript module and gbcheck's eager reference run
// on the same inputs and must agree bit for bit. Test: tests/import/torchscript_import_test.cpp.
#pragma once

#include <string>

#include "harness/import/input_spec.h"
#include "harness/model/model.h"

namespace gbc {

struct FidelityResult {
  bool identical = false;
  std::string detail;  // "2 outputs bit-identical to TorchScript" or where they differ
};

struct ImportResult {
  Model model;
  FidelityResult fidelity;
  int native_nodes = 0;   // nodes imported as the format's own ops
  int generic_nodes = 0;  // generic `aten` ops (extern calls in gbc)
  double seconds = 0;     // load, passes, walk and fidelity run
};

/// Imports `path`. Throws ModelError (exit 2) for a file that is not TorchScript, inputs that do not
/// fit forward, or a construct that cannot be represented (naming the op and its Python line).
ImportResult import_torchscript(const std::string& path, const ImportSpecs& specs);

}  // namespace gbc
