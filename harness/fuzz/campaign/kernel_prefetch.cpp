#include "harness/fuzz/campaign/kernel_prefetch.h"

#include <chrono>
#include <map>
#include <set>
#include <utility>

#include "compiler/backends/gbc_backend.h"
#include "compiler/codegen/cpu_kernel_cache.h"
#include "harness/runner/check_runner.h"
#include "harness/sandbox/sandbox.h"

namespace gbc {
namespace {

using json = nlohmann::json;

// The backends whose CPU modules the collector sees: gbc's own (the collector sits in its
// compile step). Other paths are not run in the prefetch.
constexpr const char* kPrefetchedBackend = "gbc";

// The kernels collected under one set of compile options (a backend's flags and cache folder).
struct KernelSet {
  codegen::CpuCompileOptions options;
  std::map<std::string, kir::Kernel> by_key;  // distinct kernels, by cache key
};

std::string options_id(const codegen::CpuCompileOptions& o) {
  std::string id = o.cache_dir + "\n" + (o.use_cache ? "1" : "0");
  for (const std::string& f : o.extra_flags) id += "\n" + f;
  return id;
}

// In the child: every graph's check with the kernels collected, then one build per options set.
json prefetch_in_child(const std::vector<Model>& models, const GraphCheckOptions& options) {
  std::map<std::string, KernelSet> sets;
  set_cpu_kernel_collector([&sets](const std::vector<kir::Kernel>& kernels, const codegen::CpuCompileOptions& o) {
    KernelSet& set = sets[options_id(o)];
    set.options = o;
    for (const kir::Kernel& k : kernels) set.by_key.emplace(codegen::cpu_kernel_key(k, o), k);
  });
  json out = {{"graphs", 0}, {"kernels", 0}, {"cached", 0}, {"built", 0}, {"error", ""}};
  for (const Model& model : models) {
    RunOptions run = graph_check_run_options(model, options);
    run.backends = {kPrefetchedBackend};
    try {
      run_check(model, run);
    } catch (const std::exception& e) {
      // The graph's own check reports it; its kernels so far are collected.
      out["error"] = std::string("graph ") + model.name + ": " + e.what();
    }
    out["graphs"] = out["graphs"].get<int>() + 1;
  }
  set_cpu_kernel_collector(nullptr);
  int kernels = 0, cached = 0, built = 0;
  for (auto& [id, set] : sets) {
    // Distinct names in one module: the cache key ignores names, so the kernels are the same.
    std::vector<kir::Kernel> batch;
    for (auto& [key, kernel] : set.by_key) {
      batch.push_back(kernel);
      batch.back().name = "gbc_prefetch_" + std::to_string(batch.size() - 1);
    }
    kernels += static_cast<int>(batch.size());
    codegen::CpuKernelsBuild b = codegen::compile_cpu_kernels(batch, "gbc_prefetch", set.options);
    cached += b.kernels_from_cache;
    if (b.result.ok) built += static_cast<int>(batch.size()) - b.kernels_from_cache;
    else out["error"] = "the batch did not compile; the checks compile their own modules";
  }
  out["kernels"] = kernels;
  out["cached"] = cached;
  out["built"] = built;
  return out;
}

}  // namespace

bool kernel_prefetch_applies(const GraphCheckOptions& options, const Model& model) {
  const RunOptions run = graph_check_run_options(model, options);
  bool gbc = false;
  for (const std::string& b : run.backends) gbc = gbc || b == kPrefetchedBackend;
  return gbc && run.backend_options.device == "cpu" && run.backend_options.use_cache;
}

KernelPrefetch prefetch_kernels(const std::vector<Model>& models, const GraphCheckOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  KernelPrefetch p;
  if (models.empty()) return p;
  // Twice one graph's limit: a batch of 8 takes 5-10 s on 2 cores; a graph that hangs stops the
  // prefetch there (its own check then meets the hang) instead of holding the worker for 8 limits.
  SandboxLimits limits = options.limits;
  if (limits.timeout_s > 0) limits.timeout_s *= 2.0;
  SandboxResult r = run_sandboxed([&] { return prefetch_in_child(models, options); }, limits);
  if (r.ok()) {
    p.graphs = r.value.at("graphs").get<int>();
    p.kernels = r.value.at("kernels").get<int>();
    p.kernels_cached = r.value.at("cached").get<int>();
    p.kernels_built = r.value.at("built").get<int>();
    p.error = r.value.at("error").get<std::string>();
  } else {
    p.error = r.summary();  // a crash or hang the graphs' own checks will meet and report
  }
  p.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return p;
}

}  // namespace gbc
