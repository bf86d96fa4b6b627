// The one interface every executable path implements: the eager reference, gbc's ladder (trace,
// decomp, gbc-interp, gbc: GraphRuntime, graph_runtime.h) and compilers nobody here wrote (nnc,
// torch.compile). It lives with the runtime, which implements it, below compiler/backends, which
// holds the paths and their registry (backend.h); the harness only sees this interface.
// Tests: tests/runtime/backends_test.cpp.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "compiler/aten/tensor_fwd.h"
#include "compiler/ir/graph.h"
#include "compiler/runtime/compile_event.h"

namespace gbc {

struct BackendOptions {
  std::string device = "cpu";  // cpu | cuda
  // From the model's check: section (see harness/model/check_config.h).
  std::string dynamic = "auto";
  int cache_size_limit = 8;
  bool capture_scalar_outputs = false;
  bool reorderable_logging = false;
  bool rewrite_if = false;
  // From the command line.
  std::vector<std::string> disabled_passes;
  std::string cache_dir;      // "" = default_cache_dir()
  bool use_cache = true;
  std::string inject_fault;   // testing aid (compiler/kernel/fault_injection.h, docs/debugging.md); "" = none
  std::ostream* print_sink = nullptr;  // where the model's print nodes write
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  /// Takes the graph to run. Backends may compile here or lazily on the first run of each input
  /// signature (as torch.compile does); compile failures become fallbacks, never exceptions.
  virtual void prepare(const Graph& graph, const BackendOptions& options) = 0;
  /// Runs on inputs in graph.inputs order and returns the graph outputs. Inputs that the model
  /// mutates are mutated in place. Errors raised by the computation itself propagate (OpError).
  virtual std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs) = 0;
  virtual const BackendStats& stats() const = 0;
};

}  // namespace gbc
