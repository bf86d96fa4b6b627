// GraphRuntime: the Backend behind every tier of gbc's ladder (trace, decomp, gbc-interp, gbc), as
// torch.compile's runtime is behind every torch.compile backend. It owns what the tiers share:
//   prepare: capture (capture.h) splits the graph at its graph breaks into compiled regions and
//            eager islands; every break is reported (GB001..).
//   run:     binds the call's dims, then runs the segments in order: an island on ATen, a region
//            through its cache of compiled entries. An entry is specialized (guards.h) on dtypes,
//            devices, layouts and the static dims; a call that fails every guard compiles a new
//            entry (a Recompile event, RC001..; with dynamic: auto the changed dims become
//            symbolic), until cache_size_limit entries exist, after which such calls run the
//            region eagerly (Fallback FB002).
// What differs between tiers is only how a region graph is compiled (region_executable.h).
// Tests: tests/runtime/ (guards_test.cpp: guards, recompiles, cache_size_limit; capture_test.cpp;
// backends_test.cpp).
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/runtime/backend_interface.h"
#include "compiler/runtime/capture.h"
#include "compiler/runtime/dim_binding.h"
#include "compiler/runtime/guards.h"
#include "compiler/runtime/profile.h"
#include "compiler/runtime/region_executable.h"

namespace gbc {

/// What a backend built, for `gbcheck explain`.
struct EntryDescription {
  std::string guards;  // Guard::str
  int calls = 0;
  RegionDescription region;
};

struct SegmentDescription {
  bool island = false;
  int region = -1;                       // region number (graph N)
  std::vector<std::string> nodes;        // the captured nodes, printed
  std::vector<std::string> node_names;   // each node's value ("" for print), or its op
  std::vector<std::string> ops;
  std::vector<SourceLoc> locs;
  std::vector<std::string> inputs, outputs;
  CompileEvent graph_break;              // islands
  std::vector<EntryDescription> entries; // regions: compiled entries, oldest first
  int eager_calls = 0;                   // regions: calls run eagerly after the cache limit
};

struct ProgramDescription {
  std::string backend;
  int graphs = 0;
  std::vector<SegmentDescription> segments;
  std::vector<SourceLoc> rewritten_ifs;
};

class GraphRuntime : public Backend {
 public:
  GraphRuntime(std::string name, std::unique_ptr<RegionCompiler> compiler);
  ~GraphRuntime() override;

  std::string name() const override { return name_; }
  void prepare(const Graph& graph, const BackendOptions& options) override;
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs) override;
  const BackendStats& stats() const override { return stats_; }

  ProgramDescription describe() const;
  /// Per-step times go to `profiler` from now on (nullptr: off).
  void set_profiler(Profiler* profiler) { profiler_ = profiler; }

 private:
  struct Entry {
    Guard guard;
    std::unique_ptr<RegionExecutable> exe;
    int calls = 0;
  };
  struct RegionState {
    const Segment* segment = nullptr;
    std::vector<Entry> entries;
    size_t last_hit = 0;
    std::set<int> dynamic;  // slots compiled as symbolic from now on
    std::unique_ptr<RegionExecutable> eager;  // after the cache limit
    int eager_calls = 0;
  };

  void run_region(const Segment& seg, std::vector<RtValue>& env, std::vector<int64_t>& dims);
  void run_island(size_t index, const Segment& seg, std::vector<RtValue>& env, std::vector<int64_t>& dims);
  Entry* find_entry(RegionState& rs, const std::vector<RtValue>& inputs, const std::vector<int64_t>& dims);
  Entry* compile_entry(RegionState& rs, const std::vector<RtValue>& inputs, const std::vector<int64_t>& dims);
  RegionExecutable& eager_region(RegionState& rs);

  std::string name_;
  std::unique_ptr<RegionCompiler> compiler_;
  BackendOptions options_;
  InjectedFault guard_fault_ = InjectedFault::None;  // --inject-fault guard-dtype, guard-layout
  c10::Device device_ = c10::Device(c10::DeviceType::CPU);
  CapturedProgram program_;
  std::unique_ptr<DimSlots> slots_;
  std::unique_ptr<InputBinder> binder_;
  std::set<int> initial_dynamic_;
  std::vector<RegionState> regions_;
  std::vector<std::string> island_names_;  // per segment, for profiles
  BackendStats stats_;
  Profiler* profiler_ = nullptr;
};

}  // namespace gbc
