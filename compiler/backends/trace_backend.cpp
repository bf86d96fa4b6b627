#include "compiler/backends/trace_backend.h"

#include "compiler/ir/op_schema.h"
#include "compiler/runtime/aten_region.h"
#include "compiler/runtime/graph_runtime.h"

namespace gbc {
namespace {

class TraceCompiler : public RegionCompiler {
 public:
  std::unique_ptr<RegionExecutable> compile(const Graph& region, CompileContext& ctx) override {
    for (const Node& n : region.body.nodes) {
      const OpSchema* s = find_op_schema(n.op);
      if (s && s->cls == OpClass::Extern) ++ctx.extern_calls;
    }
    return make_aten_region(region);
  }
};

}  // namespace

std::unique_ptr<Backend> make_trace_backend() {
  return std::make_unique<GraphRuntime>("trace", std::make_unique<TraceCompiler>());
}

}  // namespace gbc
