// The one interface every executable path implements: the eager reference, gbc's ladder (trace,
// decomp, gbc-interp, gbc) and compilers nobody here wrote (nnc, torch.compile). The harness only
// sees this interface; backends are created by name from backend_registry.cpp.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/aten/tensor_fwd.h"
#include "compiler/ir/graph.h"

namespace gbc {

/// Something a compiler did that a user must see: it is never silent.
struct CompileEvent {
  enum class Kind { GraphBreak, Fallback, Recompile };
  Kind kind = Kind::Fallback;
  std::string code;     // stable: GB001.. for graph breaks, FB001.. for fallbacks, RC001.. recompiles
  std::string message;  // the reason
  std::string hint;     // how to avoid it (a model change or a check option)
  SourceLoc loc;        // the node responsible, when there is one
  std::string op;

  static std::string kind_name(Kind kind);
};

struct BackendStats {
  int graphs = 0;         // compiled graphs (regions between graph breaks)
  int graph_breaks = 0;
  int fallbacks = 0;      // compiled code that ended up running eagerly
  int fusion_groups = 0;  // fused kernels formed
  int extern_calls = 0;   // ATen calls inside compiled graphs (matmul, conv2d, ...)
  int compiles = 0;       // specializations compiled: each graph's first compile plus its recompiles
  int recompiles = 0;     // compiles after the first of a graph, because a guard failed
  double compile_ms = 0;  // total time spent compiling
  std::vector<CompileEvent> events;

  /// Records an event once: the same kind, code and location are counted a single time, so that
  /// a break hit on every one of 20 cases counts as one graph break.
  void record(const CompileEvent& event);
};

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

struct BackendInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<Backend>()> create;
  bool compiled = true;  // false for the eager reference
};

/// Every backend, in the order of the ladder from eager to fully compiled.
const std::vector<BackendInfo>& backend_registry();
/// nullptr for an unknown name.
std::unique_ptr<Backend> make_backend(const std::string& name);
const BackendInfo* find_backend(const std::string& name);

}  // namespace gbc
