// What a compiled path reports about itself: compile events (graph breaks, fallbacks, recompiles),
// each one a user must see, and the counts every path's stats hold. Below both the runtime, which
// records them, and compiler/backends, whose paths report them. No torch.
// Tests: tests/runtime/capture_test.cpp, tests/runtime/backends_test.cpp.
#pragma once

#include <string>
#include <vector>

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
  std::vector<std::string> graph_notes;  // an adapter's line per graph it compiled (explain prints them)

  /// Records an event once: the same kind, code and location are counted a single time, so that
  /// a break hit on every one of 20 cases counts as one graph break.
  void record(const CompileEvent& event);
};

}  // namespace gbc
