#include "compiler/backends/decomp_backend.h"

#include "compiler/ir/op_schema.h"
#include "compiler/passes/pass_manager.h"
#include "compiler/runtime/aten_region.h"
#include "compiler/runtime/graph_runtime.h"

namespace gbc {
namespace {

class DecompCompiler : public RegionCompiler {
 public:
  std::unique_ptr<RegionExecutable> compile(const Graph& region, CompileContext& ctx) override {
    PassRunOptions popt;
    popt.disabled.insert(ctx.options.disabled_passes.begin(), ctx.options.disabled_passes.end());
    Graph g = run_graph_pipeline(region, popt);
    for (const Node& n : g.body.nodes) {
      const OpSchema* s = find_op_schema(n.op);
      if (s && s->cls == OpClass::Extern) ++ctx.extern_calls;
    }
    return make_aten_region(std::move(g));
  }
};

}  // namespace

std::unique_ptr<Backend> make_decomp_backend() {
  return std::make_unique<GraphRuntime>("decomp", std::make_unique<DecompCompiler>());
}

}  // namespace gbc
