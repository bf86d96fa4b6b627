#include "compiler/runtime/graph_runtime.h"

#include <chrono>

#include "compiler/aten/eager_executor.h"
#include "compiler/ir/generic_op.h"
#include "compiler/ir/printer.h"
#include "compiler/runtime/aten_region.h"
#include "compiler/runtime/region_graph.h"
#include "compiler/runtime/runtime_events.h"
#include "compiler/support/log.h"
#include "compiler/support/trace.h"

namespace gbc {
namespace {

std::string graph_label(const Segment& seg) { return "graph " + std::to_string(seg.region); }

std::string dim_names(const DimSlots& slots, const std::vector<int>& dims) {
  std::string s;
  for (int d : dims) s += (s.empty() ? "" : ", ") + slots.name(d);
  return s;
}

std::string recompile_hint(const std::string& code, const std::string& dynamic) {
  if (code == "RC001")
    return dynamic == "auto" ? "set check.dynamic: true to compile shape-generic code from the first call"
                             : "set check.dynamic: true (or auto) to compile one shape-generic graph instead of one per size";
  if (code == "RC002") return "pass inputs in one layout (e.g. contiguous) so that one compiled graph serves every call";
  if (code == "RC003") return "call the model with the dtypes it declares";
  return "keep the model's tensors on one device";
}

}  // namespace

GraphRuntime::GraphRuntime(std::string name, std::unique_ptr<RegionCompiler> compiler)
    : name_(std::move(name)), compiler_(std::move(compiler)) {}

GraphRuntime::~GraphRuntime() = default;

void GraphRuntime::prepare(const Graph& graph, const BackendOptions& options) {
  options_ = options;
  guard_fault_ = parse_fault(options.inject_fault).value_or(InjectedFault::None);
  device_ = options.device == "cuda" ? c10::Device(c10::DeviceType::CUDA, 0) : c10::Device(c10::DeviceType::CPU);
  GBC_INTERNAL_ASSERT(options.dynamic == "auto" || options.dynamic == "true" || options.dynamic == "false",
                      "unknown check.dynamic '" + options.dynamic + "'");
  stats_ = BackendStats{};
  regions_.clear();
  island_names_.clear();

  CaptureOptions copt;
  copt.capture_scalar_outputs = options.capture_scalar_outputs;
  copt.reorderable_logging = options.reorderable_logging;
  copt.rewrite_if = options.rewrite_if;
  program_ = capture_graph(graph, copt);
  const Graph& g = program_.graph;
  slots_ = std::make_unique<DimSlots>(g.dims);
  binder_ = std::make_unique<InputBinder>(g, *slots_);

  // Dims no input carries are data-dependent (nonzero's count): always symbolic, as torch's
  // unbacked symbols are. check.dynamic: true makes every dim with a range symbolic too.
  std::set<std::string> input_dims;
  for (const GraphInput& in : g.inputs)
    for (const DimExpr& d : g.type(in.value).shape) d.collect_symbols(input_dims);
  initial_dynamic_.clear();
  for (const auto& [name, range] : g.dims.ranges()) {
    bool data_dependent = input_dims.count(name) == 0;
    bool ranged = range.min != range.max;
    if (data_dependent || (options.dynamic == "true" && ranged)) initial_dynamic_.insert(slots_->slot(name));
  }

  for (const SourceLoc& loc : program_.rewritten_ifs)
    GBC_LOG_CHANNEL(graph_breaks) << "rewrite_if: the if at " << loc.str()
                                  << " runs both branches and selects with where (no graph break)";
  for (const CompileEvent& e : program_.breaks) report_event(stats_, e);
  stats_.graphs = program_.num_regions;
  regions_.resize(static_cast<size_t>(program_.num_regions));
  for (const Segment& seg : program_.segments) {
    island_names_.push_back(seg.kind == Segment::Kind::Island ? "island " + g.body.nodes[seg.nodes[0]].op : "");
    if (seg.kind == Segment::Kind::Region) {
      RegionState& rs = regions_[static_cast<size_t>(seg.region)];
      rs.segment = &seg;
      rs.dynamic = initial_dynamic_;
    }
  }
}

std::vector<at::Tensor> GraphRuntime::run(const std::vector<at::Tensor>& inputs) {
  GBC_INTERNAL_ASSERT(slots_ != nullptr, name_ + ": run before prepare");
  const Graph& g = program_.graph;
  std::vector<int64_t> dims;
  binder_->bind(inputs, dims);
  std::vector<RtValue> env(g.values.size());
  for (size_t i = 0; i < inputs.size(); ++i) env[static_cast<size_t>(g.inputs[i].value)] = RtValue::of(inputs[i]);
  for (size_t s = 0; s < program_.segments.size(); ++s) {
    const Segment& seg = program_.segments[s];
    if (seg.kind == Segment::Kind::Island) {
      run_island(s, seg, env, dims);
    } else {
      run_region(seg, env, dims);
    }
  }
  std::vector<at::Tensor> outputs;
  outputs.reserve(g.outputs.size());
  for (ValueId v : g.outputs) {
    const RtValue& r = env[static_cast<size_t>(v)];
    GBC_INTERNAL_ASSERT(!r.is_scalar() && r.tensor.defined(), "output '" + g.name_of(v) + "' was not computed");
    outputs.push_back(r.tensor);
  }
  return outputs;
}

void GraphRuntime::run_island(size_t index, const Segment& seg, std::vector<RtValue>& env, std::vector<int64_t>& dims) {
  ProfileScope scope(profiler_, island_names_[index], "island");
  DimBindings bindings = slots_->bindings(dims);
  EagerOptions eo;
  eo.print_sink = options_.print_sink;
  eo.device = device_;
  run_block(program_.graph, seg.island, env, bindings, eo);
  slots_->assign(bindings, dims);  // nonzero binds its data-dependent count
}

void GraphRuntime::run_region(const Segment& seg, std::vector<RtValue>& env, std::vector<int64_t>& dims) {
  RegionState& rs = regions_[static_cast<size_t>(seg.region)];
  std::vector<RtValue> inputs;
  inputs.reserve(seg.inputs.size());
  for (ValueId v : seg.inputs) inputs.push_back(env[static_cast<size_t>(v)]);
  RunContext ctx{options_.print_sink, device_, profiler_, &stats_};

  Entry* entry = find_entry(rs, inputs, dims);
  if (!entry) entry = compile_entry(rs, inputs, dims);
  std::vector<RtValue> outputs;
  if (entry) {
    ++entry->calls;
    DimBindings symbolic;
    for (int d : entry->guard.dynamic_dims) symbolic.emplace(slots_->name(d), dims[static_cast<size_t>(d)]);
    outputs = entry->exe->run(inputs, symbolic, ctx);
  } else {
    ++rs.eager_calls;
    outputs = eager_region(rs).run(inputs, slots_->bindings(dims), ctx);
  }
  GBC_INTERNAL_ASSERT(outputs.size() == seg.outputs.size(), name_ + ": " + graph_label(seg) + " returned " +
                                                                std::to_string(outputs.size()) + " values, expected " +
                                                                std::to_string(seg.outputs.size()));
  for (size_t k = 0; k < outputs.size(); ++k) env[static_cast<size_t>(seg.outputs[k])] = std::move(outputs[k]);
}

GraphRuntime::Entry* GraphRuntime::find_entry(RegionState& rs, const std::vector<RtValue>& inputs,
                                              const std::vector<int64_t>& dims) {
  if (rs.entries.empty()) return nullptr;
  // The entry that served the last call usually serves this one too.
  if (guard_passes(rs.entries[rs.last_hit].guard, inputs, dims, guard_fault_)) return &rs.entries[rs.last_hit];
  for (size_t i = 0; i < rs.entries.size(); ++i) {
    if (i == rs.last_hit || !guard_passes(rs.entries[i].guard, inputs, dims, guard_fault_)) continue;
    rs.last_hit = i;
    return &rs.entries[i];
  }
  return nullptr;
}

GraphRuntime::Entry* GraphRuntime::compile_entry(RegionState& rs, const std::vector<RtValue>& inputs,
                                                 const std::vector<int64_t>& dims) {
  const Segment& seg = *rs.segment;
  const Graph& g = program_.graph;
  const SourceLoc& loc = g.body.nodes[seg.nodes.front()].loc;
  if (!rs.entries.empty()) {
    std::optional<GuardFailure> failure = explain_guard_failure(rs.entries.back().guard, inputs, dims);
    GBC_INTERNAL_ASSERT(failure.has_value(), "a call failed every guard, yet the last entry's guard passes");
    GBC_LOG_CHANNEL(guards) << graph_label(seg) << ": guard failed: " << failure->message;
    trace::emit("guard_failed", {{"graph", graph_label(seg)}, {"code", failure->code}, {"message", failure->message}});
    if (static_cast<int>(rs.entries.size()) >= options_.cache_size_limit) {
      CompileEvent e;
      e.kind = CompileEvent::Kind::Fallback;
      e.code = "FB002";
      e.message = graph_label(seg) + " reached cache_size_limit (" + std::to_string(options_.cache_size_limit) +
                  " compiled entries): calls that fail every guard run eagerly (first: " + failure->message + ")";
      e.hint = "set check.dynamic: true so that one shape-generic graph serves every size, or raise check.cache_size_limit";
      e.loc = loc;
      if (rs.eager_calls == 0) report_event(stats_, e);
      return nullptr;
    }
    std::string message = graph_label(seg) + " recompiled (entry " + std::to_string(rs.entries.size() + 1) +
                          " of at most " + std::to_string(options_.cache_size_limit) + "): " + failure->message;
    if (options_.dynamic == "auto" && failure->code == "RC001") {
      rs.dynamic.insert(failure->changed_dims.begin(), failure->changed_dims.end());
      message += "; dim" + std::string(failure->changed_dims.size() > 1 ? "s " : " ") +
                 dim_names(*slots_, failure->changed_dims) + " dynamic from now on";
    }
    CompileEvent e;
    e.kind = CompileEvent::Kind::Recompile;
    e.code = failure->code;
    e.message = message;
    e.hint = recompile_hint(failure->code, options_.dynamic);
    e.loc = loc;
    report_event(stats_, e);
  }

  ++stats_.compiles;
  Entry entry;
  entry.guard = make_guard(g, seg, inputs, dims, *slots_, rs.dynamic);
  GBC_LOG_CHANNEL(guards) << graph_label(seg) << " entry " << rs.entries.size() << " guards:\n" << entry.guard.str(*slots_);
  if (trace::enabled())
    trace::emit("guards", {{"graph", graph_label(seg)}, {"entry", rs.entries.size()}, {"guards", entry.guard.str(*slots_)}});
  auto start = std::chrono::steady_clock::now();
  Graph rg = region_graph(program_, seg, entry.guard.static_bindings(*slots_), entry.guard.dtypes_beside(g, seg));
  CompileContext cctx{options_, stats_, "graph" + std::to_string(seg.region)};
  entry.exe = compiler_->compile(rg, cctx);
  stats_.compile_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (rs.entries.empty()) {
    stats_.fusion_groups += cctx.fusion_groups;
    stats_.extern_calls += cctx.extern_calls;
  }
  rs.entries.push_back(std::move(entry));
  rs.last_hit = rs.entries.size() - 1;
  return &rs.entries.back();
}

RegionExecutable& GraphRuntime::eager_region(RegionState& rs) {
  if (!rs.eager) rs.eager = make_aten_region(region_graph(program_, *rs.segment, {}));
  return *rs.eager;
}

ProgramDescription GraphRuntime::describe() const {
  ProgramDescription d;
  d.backend = name_;
  d.graphs = program_.num_regions;
  d.rewritten_ifs = program_.rewritten_ifs;
  const Graph& g = program_.graph;
  for (const Segment& seg : program_.segments) {
    SegmentDescription sd;
    sd.island = seg.kind == Segment::Kind::Island;
    sd.region = seg.region;
    for (size_t i : seg.nodes) {
      const Node& n = g.body.nodes[i];
      sd.nodes.push_back(print_node(g, n));
      sd.node_names.push_back(n.output() == kNoValue ? "" : g.name_of(n.output()));
      sd.ops.push_back(op_display_name(n));
      sd.locs.push_back(n.loc);
    }
    for (ValueId v : seg.inputs) sd.inputs.push_back(g.name_of(v));
    for (ValueId v : seg.outputs) sd.outputs.push_back(g.name_of(v));
    if (sd.island) {
      sd.graph_break = seg.graph_break;
    } else {
      const RegionState& rs = regions_[static_cast<size_t>(seg.region)];
      for (const Entry& e : rs.entries) sd.entries.push_back({e.guard.str(*slots_), e.calls, e.exe->describe()});
      sd.eager_calls = rs.eager_calls;
    }
    d.segments.push_back(std::move(sd));
  }
  return d;
}

}  // namespace gbc
