#include "compiler/runtime/kernel_region.h"

#include <cstdint>
#include <optional>

#include "compiler/aten/aten_semantics.h"
#include "compiler/ir/generic_op.h"
#include "compiler/ir/printer.h"
#include "compiler/kernel/specialize.h"
#include "compiler/runtime/aten_region.h"
#include "compiler/runtime/backend_device.h"
#include "compiler/runtime/extern_call.h"
#include "compiler/runtime/kernel_plan.h"
#include "compiler/runtime/param_cache.h"
#include "compiler/runtime/predicted_layouts.h"
#include "compiler/runtime/runtime_events.h"
#include "compiler/support/log.h"

namespace gbc {
namespace {

std::string join(const std::vector<std::string>& parts) {
  std::string s;
  for (const auto& p : parts) s += (s.empty() ? "" : ", ") + p;
  return s;
}

// One compiled form of a kernel: its buffers' index kinds fixed for a layout key (and, with
// KernelRegionOptions::refine_variant, what that sets: "layouts|class").
struct Variant {
  std::string key;
  kir::Kernel kernel;  // specialized, named uniquely within the region
  KernelFn fn;  // empty: interpreted
};

struct KernelState {
  KernelState(const Graph& graph, const FusionGroup& group, const LoweredKernel& kernel)
      : lowered(&kernel), group(&group), call(graph, group, kernel) {}
  const LoweredKernel* lowered;
  const FusionGroup* group;
  KernelCall call;
  std::string profile_name;
  std::vector<Variant> variants;
  bool on_aten = false;     // its nodes run on ATen: no native code (FB001, FB004)
  size_t last_variant = 0;  // the variant of the last call's layouts
  // With refine_variant: each buffer's offset from a 16-byte boundary in the last call.
  std::vector<uint8_t> offsets;
};

// Vector accesses are at most 16 bytes: pointers with equal offsets from 16-byte boundaries
// are equally aligned for every row class.
constexpr uintptr_t kWidestVector = 16;

class KernelRegion : public RegionExecutable {
 public:
  KernelRegion(KernelPlan plan, const KernelRegionOptions& options, bool kernels_on_aten)
      : plan_(std::move(plan)), options_(options) {
    const Graph& g = plan_.graph;
    kernels_.reserve(plan_.kernels.size());  // pending_ points into it
    for (size_t k = 0; k < plan_.kernels.size(); ++k) {
      KernelState& ks = kernels_.emplace_back(g, plan_.partition.groups[k], plan_.kernels[k]);
      ks.on_aten = kernels_on_aten;
      ks.profile_name = options_.label + " " + ks.lowered->kernel.name + " [" + join(step_node_names(plan_, step_of_group(k))) + "]";
    }
    for (const Step& step : plan_.partition.steps) {
      if (step.kind == Step::Kind::Kernel) {
        step_names_.push_back("");
        continue;
      }
      const Node& n = g.body.nodes[step.index];
      const char* kind = step.kind == Step::Kind::Extern ? "extern " : "aten ";
      step_names_.push_back(options_.label + " " + kind + op_display_name(n) + " [" + join(step_node_names(plan_, step)) + "]");
    }
    for (const Node& w : plan_.write_backs)
      write_back_names_.push_back(options_.label + " write-back " + g.name_of(w.args[0].value));
    const ParamSteps& folded = plan_.param_steps;
    if (folded.any()) {
      param_cache_.emplace(folded.sources, folded.results);
      std::vector<std::string> names;
      for (ValueId v : folded.results) names.push_back(g.name_of(v));
      reuse_name_ = options_.label + " param-only results [" + join(names) + "]";
    }
  }

  std::vector<RtValue> run(const std::vector<RtValue>& inputs, const DimBindings& dims, RunContext& ctx) override {
    const Graph& g = plan_.graph;
    std::vector<RtValue> env(g.values.size());
    for (size_t i = 0; i < inputs.size(); ++i) env[static_cast<size_t>(g.inputs[i].value)] = inputs[i];
    DimBindings bindings = dims;
    if (options_.native && !predicted_) precompile(env, bindings, ctx);
    ++calls_;
    // Param-only steps run only when their kept results could be stale (param_cache.h); the
    // sources are recorded before any step runs, so a write into a param later in this call
    // makes the next call recompute.
    bool reuse = false, keep = false;
    if (param_cache_) {
      ProfileScope scope(ctx.profiler, reuse_name_, "cached");
      reuse = param_cache_->valid(env, dims);
      if (reuse) {
        param_cache_->restore(env);
      } else {
        keep = param_cache_->snapshot_sources(env, dims);
        ++param_runs_;
      }
    }
    const auto& steps = plan_.partition.steps;
    for (size_t s = 0; s < steps.size(); ++s) {
      if (options_.observer && options_.observer->done()) return {};
      const Step& step = steps[s];
      if (reuse && plan_.param_steps.folded[s]) continue;
      if (step.kind == Step::Kind::Kernel) {
        run_kernel(kernels_[step.index], env, bindings, ctx);
      } else {
        ProfileScope scope(ctx.profiler, step_names_[s], step.kind == Step::Kind::Extern ? "extern" : "aten");
        if (step.kind == Step::Kind::Extern)
          externs_.run(g, g.body.nodes[step.index], env, bindings, ctx.device);
        else
          run_node_on_aten(g, g.body.nodes[step.index], env, bindings, nullptr, ctx.device);
      }
    }
    if (keep) param_cache_->keep_results(env);
    for (const Node& p : plan_.prints) run_node_on_aten(g, p, env, bindings, ctx.print_sink, ctx.device);
    for (size_t w = 0; w < plan_.write_backs.size(); ++w) {
      ProfileScope scope(ctx.profiler, write_back_names_[w], "aten");
      run_node_on_aten(g, plan_.write_backs[w], env, bindings, nullptr, ctx.device);
    }
    std::vector<RtValue> outputs;
    outputs.reserve(plan_.num_outputs);
    for (size_t i = 0; i < plan_.num_outputs; ++i) outputs.push_back(env[static_cast<size_t>(g.outputs[i])]);
    return outputs;
  }

  RegionDescription describe() const override {
    const Graph& g = plan_.graph;
    RegionDescription d;
    d.graph_text = print_graph(g);
    for (size_t s = 0; s < plan_.partition.steps.size(); ++s) {
      const Step& step = plan_.partition.steps[s];
      StepDescription sd;
      if (step.kind == Step::Kind::Kernel) {
        const KernelState& ks = kernels_[step.index];
        sd.kind = StepDescription::Kind::Kernel;
        sd.name = ks.lowered->kernel.name;
        for (size_t i : ks.group->nodes) {
          sd.nodes.push_back(print_node(g, g.body.nodes[i]));
          sd.locs.push_back(g.body.nodes[i].loc);
        }
        sd.note = ks.lowered->kernel.kind == kir::KernelKind::Reduction ? "reduction" : "pointwise";
        if (ks.on_aten) sd.note += "; its nodes run on ATen (fallback)";
      } else {
        const Node& n = g.body.nodes[step.index];
        sd.kind = step.kind == Step::Kind::Extern    ? StepDescription::Kind::Extern
                  : step.kind == Step::Kind::Library ? StepDescription::Kind::Library
                                                     : StepDescription::Kind::Eager;
        sd.name = op_display_name(n);
        sd.nodes.push_back(print_node(g, n));
        sd.locs.push_back(n.loc);
        sd.note = step.reason;
      }
      if (plan_.param_steps.folded[s]) {
        sd.note += std::string(sd.note.empty() ? "" : "; ") + "param-only: computed on " + std::to_string(param_runs_) +
                   " of " + std::to_string(calls_) + " calls, reused while its params are unchanged";
      }
      d.steps.push_back(std::move(sd));
    }
    // Prints and write-backs run on ATen after every step.
    auto after_the_steps = [&](const Node& n, const std::string& name, const std::string& note) {
      StepDescription sd;
      sd.kind = StepDescription::Kind::Aten;
      sd.name = name;
      sd.nodes.push_back(print_node(g, n));
      sd.locs.push_back(n.loc);
      sd.note = note;
      d.steps.push_back(std::move(sd));
    };
    for (const Node& p : plan_.prints) after_the_steps(p, "print", "after the graph (reorderable_logging)");
    for (const Node& w : plan_.write_backs)
      after_the_steps(w, "write-back",
                      "after the graph: the new value of input '" + g.name_of(w.args[0].value) + "', computed in the steps above");
    for (const KernelState& ks : kernels_) {
      std::string listing = kir::print_kernel(ks.lowered->kernel);
      for (const Variant& v : ks.variants)
        listing += "  variant " + v.kernel.name + ": layouts " + v.key + (v.fn ? ", native" : ", interpreted") + "\n";
      d.kernels.push_back(std::move(listing));
    }
    return d;
  }

 private:
  Step step_of_group(size_t k) const {
    Step s;
    s.kind = Step::Kind::Kernel;
    s.index = k;
    return s;
  }

  void run_kernel(KernelState& ks, std::vector<RtValue>& env, DimBindings& bindings, RunContext& ctx) {
    ProfileScope scope(ctx.profiler, ks.profile_name, "kernel");
    const Graph& g = plan_.graph;
    const LoweredKernel& lk = *ks.lowered;
    if (ks.on_aten) {
      for (size_t i : ks.group->nodes) run_node_on_aten(g, g.body.nodes[i], env, bindings, nullptr, ctx.device);
      return;
    }
    ks.call.bind(env, bindings, ctx.device);
    bool changed = false;
    const Specialization& spec = ks.call.specialize(&changed);
    if (refines(ks) && offsets_changed(ks)) changed = true;
    if (changed) {
      ks.last_variant = variant_for(ks, spec, ks.call.iter_sizes(), &ks.call.data());
      if (!pending_.empty()) {
        compile_pending(ctx);
        if (ks.on_aten) {
          for (size_t i : ks.group->nodes) run_node_on_aten(g, g.body.nodes[i], env, bindings, nullptr, ctx.device);
          return;
        }
      }
    }
    const Variant& v = ks.variants[ks.last_variant];
    if (v.fn && options_.on_buffer && !ks.call.writes_nothing())
      for (ValueId value : lk.buffer_values) options_.on_buffer(env[static_cast<size_t>(value)].tensor);
    ks.call.run(v.kernel, v.fn, options_.num_threads, options_.observer);
  }

  bool refines(const KernelState& ks) const {
    return options_.refine_variant && ks.lowered->kernel.kind == kir::KernelKind::Reduction;
  }

  // Whether a buffer's pointer sits otherwise on a 16-byte boundary than in the last call (what a
  // refined variant's class may follow without a layout change); records this call's.
  static bool offsets_changed(KernelState& ks) {
    const std::vector<void*>& data = ks.call.data();
    ks.offsets.resize(data.size());  // allocates on the first call only
    bool changed = false;
    for (size_t b = 0; b < data.size(); ++b) {
      const auto offset = static_cast<uint8_t>(reinterpret_cast<uintptr_t>(data[b]) % kWidestVector);
      changed = changed || offset != ks.offsets[b];
      ks.offsets[b] = offset;
    }
    return changed;
  }

  // The variant for a call (iteration sizes `iter`, buffer pointers `data`), made and queued for
  // compiling when new.
  size_t variant_for(KernelState& ks, const Specialization& spec, const std::vector<int64_t>& iter,
                     const std::vector<void*>* data) {
    std::string key = spec.layout_key;
    std::optional<kir::Kernel> refined;
    if (refines(ks)) {
      refined = specialized_kernel(ks.lowered->kernel, spec);
      const RowSizes rows = row_sizes(*ks.lowered, iter);
      options_.refine_variant(*refined, rows.outer, rows.inner, data);
      key += std::string("|") + kir::cuda_rows_name(refined->cuda_rows);
    }
    // InjectedFault::GuardLayout: the first variant (of the call's row class: another class would
    // be an internal error at launch, not a wrong result) serves every layout, as if its strides held.
    if (ks.lowered->kernel.fault == InjectedFault::GuardLayout)
      for (size_t i = 0; i < ks.variants.size(); ++i)
        if (!refined || ks.variants[i].kernel.cuda_rows == refined->cuda_rows) return i;
    for (size_t i = 0; i < ks.variants.size(); ++i)
      if (ks.variants[i].key == key) return i;
    Variant v;
    v.key = key;
    v.kernel = refined ? std::move(*refined) : specialized_kernel(ks.lowered->kernel, spec);
    if (!ks.variants.empty()) v.kernel.name += "_v" + std::to_string(ks.variants.size());
    ks.variants.push_back(std::move(v));
    if (options_.native) pending_.push_back({&ks, ks.variants.size() - 1});
    return ks.variants.size() - 1;
  }

  // The first call's variants, compiled in one module before it runs.
  void precompile(const std::vector<RtValue>& env, const DimBindings& bindings, RunContext& ctx) {
    predicted_ = true;
    std::vector<std::optional<std::vector<BufferLayout>>> layouts = predict_kernel_layouts(plan_, env, bindings);
    std::vector<void*> data;
    for (size_t k = 0; k < kernels_.size(); ++k) {
      if (!layouts[k] || kernels_[k].on_aten) continue;
      const LoweredKernel& lk = *kernels_[k].lowered;
      // The region's inputs are there already; what kernels and ATen steps make is not allocated
      // yet: nullptr, aligned, as ATen allocates them.
      data.clear();
      for (ValueId v : lk.buffer_values) {
        const at::Tensor& t = env[static_cast<size_t>(v)].tensor;
        data.push_back(t.defined() ? t.data_ptr() : nullptr);
      }
      variant_for(kernels_[k], specialize_layouts(lk, *layouts[k]), iteration_sizes(lk, bindings), &data);
    }
    if (!pending_.empty()) compile_pending(ctx);
  }

  // Compiles the variants waiting for native code into one module; when that fails, their
  // kernels' nodes run on ATen from then on (FB001).
  void compile_pending(RunContext& ctx) {
    std::vector<kir::Kernel> kernels;
    std::string names;
    for (const auto& [ks, vi] : pending_) {
      kernels.push_back(ks->variants[vi].kernel);
      names += (names.empty() ? "" : ", ") + kernels.back().name;
    }
    NativeModule m = options_.native(kernels, options_.label + "_m" + std::to_string(modules_++));
    if (ctx.stats) ctx.stats->compile_ms += m.compile_ms;
    if (m.ok) {
      GBC_INTERNAL_ASSERT(m.functions.size() == pending_.size(), "native compiler returned the wrong number of kernels");
      for (size_t i = 0; i < pending_.size(); ++i) pending_[i].first->variants[pending_[i].second].fn = m.functions[i];
    } else {
      const LoweredKernel& first = *pending_.front().first->lowered;
      CompileEvent e;
      e.kind = CompileEvent::Kind::Fallback;
      e.code = "FB001";
      e.message = options_.label + ": fused kernel" + (pending_.size() > 1 ? "s " : " ") + names +
                  " failed to compile; their nodes run on ATen: " + m.error;
      e.hint = options_.compile_hint;
      if (!first.kernel.node_locs.empty()) e.loc = first.kernel.node_locs.front();
      for (const auto& [ks, vi] : pending_) ks->on_aten = true;
      if (ctx.stats) report_event(*ctx.stats, e);
    }
    pending_.clear();
  }

  KernelPlan plan_;
  KernelRegionOptions options_;
  std::vector<KernelState> kernels_;
  std::vector<std::string> step_names_;
  std::vector<std::string> write_back_names_;  // profile row names of plan_.write_backs
  std::vector<std::pair<KernelState*, size_t>> pending_;  // variants waiting for native code
  ExternCalls externs_;                   // runs the Extern steps (keeps packed conv weights)
  std::optional<ParamCache> param_cache_;  // when the plan has param-only steps
  std::string reuse_name_;                 // the profile row of checking (and reusing) them
  int64_t calls_ = 0, param_runs_ = 0;     // for describe(): how often the param-only steps ran
  int modules_ = 0;
  bool predicted_ = false;  // precompile ran
};

bool holds_reduced_floats(const Graph& g) {
  for (const ValueInfo& v : g.values)
    if (v.type.kind == ValueType::Kind::Tensor && (v.type.dtype == DType::Float16 || v.type.dtype == DType::BFloat16)) return true;
  return false;
}

}  // namespace

std::unique_ptr<RegionExecutable> make_kernel_region(const Graph& region, CompileContext& ctx,
                                                     const KernelRegionOptions& options) {
  PlanOptions popt;
  popt.disabled_passes = ctx.options.disabled_passes;
  popt.capture_scalar_outputs = ctx.options.capture_scalar_outputs;
  popt.target = ctx.options.device == "cuda" ? LowerOptions::Target::Cuda : LowerOptions::Target::Cpu;
  // Asked only for graphs that hold float16/bfloat16 values: the probe's first run on a device
  // costs ATen's kernel loads there (about 0.3 s on CUDA), which a float32 graph need not pay.
  if (holds_reduced_floats(region))
    popt.half_numbers_in_float32 = aten_semantics(backend_device(ctx.options)).half_numbers_in_float32;
  std::optional<InjectedFault> fault = parse_fault(ctx.options.inject_fault);
  GBC_INTERNAL_ASSERT(fault.has_value(), "unknown fault '" + ctx.options.inject_fault + "' reached the compiler");
  popt.fault = *fault;
  GBC_INTERNAL_ASSERT(!(options.observer && options.native), "a kernel region with native code cannot be observed");
  KernelPlan plan = plan_kernels(region, popt);
  for (const CompileEvent& e : plan.fallbacks) report_event(ctx.stats, e);
  ctx.fusion_groups += static_cast<int>(plan.kernels.size());
  ctx.extern_calls += plan.extern_calls;
  for (const LoweredKernel& lk : plan.kernels) {
    GBC_LOG_CHANNEL(kernels) << ctx.label << ": " << kir::print_kernel(lk.kernel);
  }
  // The interpreter reads raw host memory: a device without a native runner (CUDA has one,
  // cuda_kernel_runner.h) runs the fused groups' nodes on ATen, and says so.
  const bool on_aten = ctx.options.device != "cpu" && !options.native && !plan.kernels.empty();
  if (on_aten) {
    CompileEvent e;
    e.kind = CompileEvent::Kind::Fallback;
    e.code = "FB004";
    e.message = ctx.label + ": no kernel runner for device " + ctx.options.device + "; the fused groups' nodes run on ATen";
    e.hint = "check gbc's fused kernels on the CPU (--device cpu)";
    if (!plan.kernels.front().kernel.node_locs.empty()) e.loc = plan.kernels.front().kernel.node_locs.front();
    report_event(ctx.stats, e);
  }
  return std::make_unique<KernelRegion>(std::move(plan), options, on_aten);
}

}  // namespace gbc
