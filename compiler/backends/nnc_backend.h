// The `nnc` backend: LibTorch's TorchScript TensorExpr fuser ("NNC") as a compiled path. The graph
// is written as TorchScript source (torchscript_emitter.h), compiled with torch::jit, and run by the
// profiling graph executor with the fuser forced on, so NNC builds its fusion groups exactly as it
// would for a user's scripted function. What NNC did is reported, never hidden: no fusion group,
// a guard failure that ran the unfused fallback, or a failure are Fallback events (FB1xx), and a
// new kernel specialization is a Recompile event (RC1xx).
#pragma once

#include <memory>

#include "compiler/backends/backend.h"

namespace gbc {

std::unique_ptr<Backend> make_nnc_backend();

}  // namespace gbc
