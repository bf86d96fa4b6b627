#include "compiler/backends/gbc_interp_backend.h"

#include "compiler/runtime/graph_runtime.h"
#include "compiler/runtime/kernel_region.h"

namespace gbc {
namespace {

class InterpCompiler : public RegionCompiler {
 public:
  std::unique_ptr<RegionExecutable> compile(const Graph& region, CompileContext& ctx) override {
    KernelRegionOptions o;
    o.label = ctx.label;
    return make_kernel_region(region, ctx, o);
  }
};

}  // namespace

std::unique_ptr<Backend> make_gbc_interp_backend() {
  return std::make_unique<GraphRuntime>("gbc-interp", std::make_unique<InterpCompiler>());
}

}  // namespace gbc
