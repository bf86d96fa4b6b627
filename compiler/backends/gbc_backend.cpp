#include "compiler/backends/gbc_backend.h"

#include <cstdlib>
#include <thread>

#include "compiler/codegen/cpu_codegen.h"
#include "compiler/codegen/cpu_compiler.h"
#include "compiler/codegen/cpu_kernel_cache.h"
#include "compiler/runtime/cuda_kernel_runner.h"
#include "compiler/runtime/graph_runtime.h"
#include "compiler/runtime/kernel_region.h"
#include "compiler/support/compiler_output.h"
#include "compiler/support/log.h"
#include "compiler/support/trace.h"

namespace gbc {
namespace {

CpuKernelCollector& kernel_collector() {
  static CpuKernelCollector collector;
  return collector;
}

NativeModule compile_module(const std::vector<kir::Kernel>& kernels, const std::string& module,
                            const codegen::CpuCompileOptions& options) {
  if (kernel_collector()) {
    kernel_collector()(kernels, options);
    NativeModule interpreted;  // every function empty: the kernels stay in the interpreter
    interpreted.ok = true;
    interpreted.functions.resize(kernels.size());
    return interpreted;
  }
  const bool traced = trace::enabled();
  // The whole module's source, as check generates it, for the log and the trace; only the kernels
  // the per-kernel cache lacks are compiled (cpu_kernel_cache.h).
  const std::string source = traced || log::channel_enabled(log::Channel::output_code)
                                 ? codegen::generate_cpu_source(kernels, module)
                                 : std::string();
  GBC_LOG_CHANNEL(output_code) << module << ": generated source\n" << source;
  codegen::CpuKernelsBuild build = codegen::compile_cpu_kernels(kernels, module, options);
  const codegen::CpuCompileResult& r = build.result;
  NativeModule m;
  m.ok = r.ok;
  m.functions.assign(r.kernels.begin(), r.kernels.end());
  m.compile_ms = r.compile_ms;
  if (!r.ok) {
    m.error = first_error_line(r.log);
    GBC_LOG_CHANNEL(kernels) << module << ": compile failed\n" << r.log;
  } else {
    GBC_LOG_CHANNEL(kernels) << module << ": " << build.kernels_from_cache << " of " << kernels.size()
                             << " kernels from the kernel cache"
                             << (r.library_path.empty() ? "" : (r.cache_hit ? ", the rest loaded from " : ", the rest compiled into ") + r.library_path)
                             << " in " << r.compile_ms << " ms";
  }
  if (traced) {
    std::vector<std::string> names;
    for (const kir::Kernel& k : kernels) names.push_back(k.name);
    trace::emit("kernel", {{"module", module}, {"device", "cpu"}, {"kernels", names}, {"source", source}, {"ok", r.ok},
                           {"cache_hit", r.cache_hit}, {"kernels_from_cache", build.kernels_from_cache},
                           {"compile_ms", r.compile_ms}, {"error", m.error}});
  }
  return m;
}

class CpuRegionCompiler : public RegionCompiler {
 public:
  explicit CpuRegionCompiler(std::vector<std::string> extra_cxx_flags) : extra_cxx_flags_(std::move(extra_cxx_flags)) {}

  std::unique_ptr<RegionExecutable> compile(const Graph& region, CompileContext& ctx) override {
    if (ctx.options.device == "cuda") return make_kernel_region(region, ctx, cuda_kernel_region_options(ctx));
    codegen::CpuCompileOptions copt;
    copt.extra_flags = extra_cxx_flags_;
    copt.cache_dir = ctx.options.cache_dir.empty() ? "" : ctx.options.cache_dir + "/cpu";
    copt.use_cache = ctx.options.use_cache;
    copt.shared_header = codegen::cpu_kernel_header();
    KernelRegionOptions o;
    o.label = ctx.label;
    o.num_threads = gbc_kernel_threads();
    o.native = [copt](const std::vector<kir::Kernel>& kernels, const std::string& module) {
      return compile_module(kernels, module, copt);
    };
    return make_kernel_region(region, ctx, o);
  }

 private:
  std::vector<std::string> extra_cxx_flags_;
};

}  // namespace

void set_cpu_kernel_collector(CpuKernelCollector collector) { kernel_collector() = std::move(collector); }

int gbc_kernel_threads() {
  if (const char* env = std::getenv("GBCHECK_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

std::unique_ptr<Backend> make_gbc_backend() { return make_gbc_backend_with_cxx_flags({}); }

std::unique_ptr<Backend> make_gbc_backend_with_cxx_flags(std::vector<std::string> extra_cxx_flags) {
  return std::make_unique<GraphRuntime>("gbc", std::make_unique<CpuRegionCompiler>(std::move(extra_cxx_flags)));
}

}  // namespace gbc
