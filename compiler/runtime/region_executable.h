// The seam between the runtime (capture, guards, recompiles, islands: graph_runtime.h) and the tiers
// of gbc's ladder. A RegionCompiler turns one specialized region graph (region_graph.h) into a
// RegionExecutable: trace runs it op by op, decomp runs the graph pipeline's output op by op,
// gbc-interp and gbc run fused kernels (kernel_plan.h). Tiers differ only here.
// Tests: tests/runtime/ (through the backends).
#pragma once

#include <c10/core/Device.h>

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "compiler/aten/runtime_value.h"
#include "compiler/ir/graph.h"
#include "compiler/runtime/backend_interface.h"
#include "compiler/runtime/profile.h"

namespace gbc {

/// What a compiled region did with one step, for explain and profiles.
struct StepDescription {
  enum class Kind { Kernel, Extern, Library, Eager, Aten };
  Kind kind = Kind::Aten;
  std::string name;                 // kernel name, or the op
  std::vector<std::string> nodes;   // the graph nodes it computes, printed ("y: float32[N] = exp(x)")
  std::vector<SourceLoc> locs;
  std::string note;                 // Kernel: pointwise or reduction; others: why ATen runs it

  static std::string kind_name(Kind kind);
};

struct RegionDescription {
  std::string graph_text;  // the region graph the tier runs (after the pipeline where there is one)
  std::vector<StepDescription> steps;
  std::vector<std::string> kernels;  // kernel IR listings
};

/// Where a call's effects go.
struct RunContext {
  std::ostream* print_sink = nullptr;  // deferred prints (check.reorderable_logging)
  c10::Device device = c10::Device(c10::DeviceType::CPU);
  Profiler* profiler = nullptr;        // per-step times when profiling
  BackendStats* stats = nullptr;       // work a tier does lazily (gbc compiles after the first call)
};

class RegionExecutable {
 public:
  virtual ~RegionExecutable() = default;
  /// Runs on the region's inputs (graph.inputs order); returns its outputs (graph.outputs order).
  /// `dims` binds the dims that the specialization left symbolic.
  virtual std::vector<RtValue> run(const std::vector<RtValue>& inputs, const DimBindings& dims, RunContext& ctx) = 0;
  virtual RegionDescription describe() const = 0;
};

struct CompileContext {
  const BackendOptions& options;
  BackendStats& stats;  // fallbacks the compiler decides on; compile time is the caller's to add
  std::string label;    // "graph0": names the region in profiles, modules and events
  int fusion_groups = 0;
  int extern_calls = 0;
};

class RegionCompiler {
 public:
  virtual ~RegionCompiler() = default;
  virtual std::unique_ptr<RegionExecutable> compile(const Graph& region, CompileContext& ctx) = 0;
};

}  // namespace gbc
