// The nnc backend (see nnc_backend.h). How a run goes:
//   prepare: emit TorchScript, compile it (torch::jit CompilationUnit). Failures become fallbacks.
//   run:     on the first call with an input signature (dtypes, sizes, strides, devices), warm up on
//            copies of the inputs: the profiling executor profiles the first call and optimizes
//            (fuses) on the next, and re-specializes when a kernel's guard fails. Then the real call,
//            observed through RecordFunction: fused kernels announce themselves ("fused_..."), and
//            so do the executor's fallback functions ("fallback_function"), which run when a guard
//            rejects the inputs.
// NNC's settings are process-global, so they are set around each call, restored after, and calls
// are serialized.
#include "compiler/backends/nnc_backend.h"

#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <ATen/ops/empty.h>
#include <ATen/record_function.h>
#include <c10/util/Exception.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/frontend/resolver.h>
#include <torch/csrc/jit/frontend/sugared_value.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/runtime/print_handler.h>
#include <torch/csrc/jit/runtime/profiling_graph_executor_impl.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "compiler/aten/eager_executor.h"
#include "compiler/backends/torchscript_emitter.h"
#include "compiler/ir/op_schema.h"

namespace torch::jit {
// Declared in torch/csrc/jit/codegen/fuser/interface.h, which Debian's LibTorch 1.13 does not install.
TORCH_API bool canFuseOnCPU();
TORCH_API bool canFuseOnGPU();
TORCH_API void overrideCanFuseOnCPU(bool value);
TORCH_API void overrideCanFuseOnGPU(bool value);
}  // namespace torch::jit

namespace gbc {

void ensure_custom_ops_registered();  // torch_custom_ops.cpp

namespace {

// Specializations the executor may compile before it gives up and runs unfused.
constexpr size_t kSpecializationDepth = 20;

// ---- name resolution ----
// torch::jit::compile's native resolver maps `torch.X` to aten::X and nothing else; custom ops are
// spelled torch.ops.<namespace>.<name> in TorchScript, so `torch.ops` is added here.

struct OpsNamespace : torch::jit::SugaredValue {
  std::string kind() const override { return "torch.ops"; }
  std::shared_ptr<torch::jit::SugaredValue> attr(const torch::jit::SourceRange&, torch::jit::GraphFunction&,
                                                 const std::string& ns) override {
    return std::make_shared<torch::jit::BuiltinModule>(ns);
  }
};

struct TorchModule : torch::jit::BuiltinModule {
  TorchModule() : torch::jit::BuiltinModule("aten") {}
  std::shared_ptr<torch::jit::SugaredValue> attr(const torch::jit::SourceRange& loc, torch::jit::GraphFunction& m,
                                                 const std::string& field) override {
    if (field == "ops") return std::make_shared<OpsNamespace>();
    return torch::jit::BuiltinModule::attr(loc, m, field);
  }
};

struct TorchResolver : torch::jit::Resolver {
  std::shared_ptr<torch::jit::SugaredValue> resolveValue(const std::string& name, torch::jit::GraphFunction&,
                                                         const torch::jit::SourceRange&) override {
    if (name == "torch") return std::make_shared<TorchModule>();
    return nullptr;
  }
  c10::TypePtr resolveType(const std::string&, const torch::jit::SourceRange&) override { return nullptr; }
};

// ---- process-global state ----

std::mutex& nnc_mutex() {
  static std::mutex m;
  return m;
}

// check.dynamic picks NNC's fusion strategy, mirroring what the knob means for torch.compile:
// false: static kernels only, one per input shape; true: shape-generic kernels from the start;
// auto: a static kernel for the first shapes seen, shape-generic ones once a shape changes. Static
// kernels fuse more on the CPU (matmul and conv2d become NNC external calls only with static shapes).
torch::jit::FusionStrategy fusion_strategy(const std::string& dynamic) {
  using torch::jit::FusionBehavior;
  if (dynamic == "false") return {{FusionBehavior::STATIC, kSpecializationDepth}};
  if (dynamic == "true") return {{FusionBehavior::DYNAMIC, kSpecializationDepth}};
  return {{FusionBehavior::STATIC, 1}, {FusionBehavior::DYNAMIC, kSpecializationDepth}};
}

// The fuser configuration for one TorchScript call, restored when it ends. Fusion group inlining
// stays on (groups of at least two ops, PyTorch's default): single-op groups add nothing and
// LibTorch 1.13 crashes compiling a lone `cat` as one ("UNSUPPORTED DTYPE: List[Tensor]").
class FuserSettings {
 public:
  FuserSettings(bool cuda, const std::string& dynamic) : cuda_(cuda) {
    fuser_ = torch::jit::tensorExprFuserEnabled();
    torch::jit::setTensorExprFuserEnabled(true);
    // sum, softmax and log_softmax join fusion groups only with reductions enabled.
    reductions_ = torch::jit::setTexprReductionsEnabled(true);
    torch::jit::FusionStrategy strategy = fusion_strategy(dynamic);
    strategy_ = torch::jit::setFusionStrategy(strategy);
    profiling_ = torch::jit::getProfilingMode().exchange(true);
    executor_ = torch::jit::getExecutorMode().exchange(true);
    optimize_ = torch::jit::getGraphExecutorOptimize();
    torch::jit::setGraphExecutorOptimize(true);
    if (cuda_) {
      gpu_ = torch::jit::canFuseOnGPU();
      torch::jit::overrideCanFuseOnGPU(true);
    } else {
      // Without LLVM (Debian's build has none) NNC must be allowed to interpret its kernels.
      cpu_ = torch::jit::canFuseOnCPU();
      torch::jit::overrideCanFuseOnCPU(true);
      llvm_ = torch::jit::tensorexpr::getTEMustUseLLVMOnCPU();
      torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = false;
    }
  }
  FuserSettings(const FuserSettings&) = delete;
  FuserSettings& operator=(const FuserSettings&) = delete;
  ~FuserSettings() {
    if (cuda_) {
      torch::jit::overrideCanFuseOnGPU(gpu_);
    } else {
      torch::jit::overrideCanFuseOnCPU(cpu_);
      torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = llvm_;
    }
    torch::jit::setGraphExecutorOptimize(optimize_);
    torch::jit::getExecutorMode() = executor_;
    torch::jit::getProfilingMode() = profiling_;
    torch::jit::setFusionStrategy(strategy_);
    torch::jit::setTexprReductionsEnabled(reductions_);
    torch::jit::setTensorExprFuserEnabled(fuser_);
  }

 private:
  bool cuda_;
  bool fuser_ = false, reductions_ = false, profiling_ = false, executor_ = false, optimize_ = false;
  bool cpu_ = false, gpu_ = false, llvm_ = false;
  torch::jit::FusionStrategy strategy_;
};

// ---- what a call did, from RecordFunction ----

struct CallTrace {
  struct Frame {
    bool fallback = false;
    int kernels = 0;
  };
  std::vector<Frame> frames;  // open TorchScript function frames
  int kernels = 0;            // fused kernels run
  int fallbacks = 0;          // fallback functions entered
  int unfused_fallbacks = 0;  // ... in which no fused kernel ran
  int fused_fallback_depth = 0;  // deepest nesting of fallback functions in which kernels ran
};

thread_local CallTrace* t_trace = nullptr;

bool is_fused_kernel(const char* name) { return std::string(name).rfind("fused_", 0) == 0; }

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  if (!t_trace) return nullptr;
  if (fn.scope() == at::RecordScope::TORCHSCRIPT_FUNCTION) {
    bool fallback = std::string(fn.name()) == "fallback_function";
    t_trace->frames.push_back({fallback, 0});
    if (fallback) ++t_trace->fallbacks;
  } else if (is_fused_kernel(fn.name())) {
    ++t_trace->kernels;
    if (!t_trace->frames.empty()) ++t_trace->frames.back().kernels;
  }
  return nullptr;
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext*) {
  if (!t_trace || fn.scope() != at::RecordScope::TORCHSCRIPT_FUNCTION || t_trace->frames.empty()) return;
  CallTrace::Frame f = t_trace->frames.back();
  t_trace->frames.pop_back();
  if (f.fallback) {
    if (f.kernels == 0) {
      ++t_trace->unfused_fallbacks;
    } else {
      int depth = 1;
      for (const auto& open : t_trace->frames) depth += open.fallback ? 1 : 0;
      t_trace->fused_fallback_depth = std::max(t_trace->fused_fallback_depth, depth);
    }
  }
  // Kernels of a nested function count for the function that called it.
  if (!t_trace->frames.empty()) t_trace->frames.back().kernels += f.kernels;
}

class TraceScope {
 public:
  explicit TraceScope(CallTrace& trace) {
    t_trace = &trace;
    handle_ = at::addThreadLocalCallback(
        at::RecordFunctionCallback(&on_enter, &on_exit)
            .scopes({at::RecordScope::FUNCTION, at::RecordScope::TORCHSCRIPT_FUNCTION}));
  }
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;
  ~TraceScope() {
    at::removeCallback(handle_);
    t_trace = nullptr;
  }

 private:
  at::CallbackHandle handle_;
};

// ---- print: TorchScript's print goes to a process-wide handler ----

std::ostringstream* g_print_buffer = nullptr;  // guarded by nnc_mutex

void print_to_buffer(const std::string& text) {
  if (g_print_buffer) *g_print_buffer << text;
}

// Collects a call's prints (nullptr discards them, for warm-ups); they reach the sink only when
// the call succeeds, so a call retried eagerly does not print twice.
class PrintScope {
 public:
  explicit PrintScope(std::ostringstream* buffer) : previous_(torch::jit::getPrintHandler()) {
    g_print_buffer = buffer;
    torch::jit::setPrintHandler(&print_to_buffer);
  }
  PrintScope(const PrintScope&) = delete;
  PrintScope& operator=(const PrintScope&) = delete;
  ~PrintScope() {
    torch::jit::setPrintHandler(previous_);
    g_print_buffer = nullptr;
  }

 private:
  torch::jit::PrintHandler previous_;
};

// ---- RNG: warm-ups must not move the generator that the real call (dropout) draws from ----

class RngSnapshot {
 public:
  explicit RngSnapshot(bool cuda) {
    save(c10::DeviceType::CPU);
    if (cuda) save(c10::DeviceType::CUDA);
  }
  void restore() {
    for (auto& [gen, state] : saved_) {
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(state);
    }
  }

 private:
  void save(c10::DeviceType type) {
    at::Generator gen = at::globalContext().defaultGenerator(c10::Device(type));
    std::lock_guard<std::mutex> lock(gen.mutex());
    saved_.emplace_back(gen, gen.get_state());
  }
  std::vector<std::pair<at::Generator, at::Tensor>> saved_;
};

// ---- input copies ----

// The whole storage of `t` as a flat tensor.
at::Tensor storage_view(const at::Tensor& t) {
  int64_t elems = static_cast<int64_t>(t.storage().nbytes()) / static_cast<int64_t>(t.element_size());
  return at::empty({0}, t.options()).set_(t.storage(), 0, {elems}, {1});
}

// A copy with the same sizes, strides and storage offset: the executor specializes its kernels on
// strides, so warming up on a contiguous clone of a strided input would compile the wrong kernel.
at::Tensor replica(const at::Tensor& t) {
  if (!t.defined()) return t;
  return storage_view(t).clone().as_strided(t.sizes(), t.strides(), t.storage_offset());
}

std::vector<at::Tensor> replicas(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(replica(t));
  return out;
}

std::string sizes_str(c10::IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

// What the executor's guards look at: device, dtype, sizes and strides of every input.
std::string signature(const std::vector<at::Tensor>& inputs) {
  std::string s;
  for (const auto& t : inputs) {
    if (!t.defined()) {
      s += "undefined;";
      continue;
    }
    s += t.device().str() + ":" + std::string(c10::toString(t.scalar_type())) + sizes_str(t.sizes()) + "/" +
         sizes_str(t.strides()) + ";";
  }
  return s;
}

std::string shapes_str(const std::vector<at::Tensor>& inputs) {
  std::string s;
  for (const auto& t : inputs) s += (s.empty() ? "" : ", ") + (t.defined() ? sizes_str(t.sizes()) : "undefined");
  return s;
}

int count_nodes(const torch::jit::Block* block, c10::Symbol kind) {
  int n = 0;
  for (const torch::jit::Node* node : block->nodes()) {
    if (node->kind() == kind) ++n;
    for (const torch::jit::Block* b : node->blocks()) n += count_nodes(b, kind);
  }
  return n;
}

// A TorchScript error as one line, and the source line it points at (0 when none). LibTorch's
// messages carry a C++ backtrace and, for interpreter errors, a TorchScript traceback.
struct ScriptError {
  std::string message;
  int line = 0;
};

ScriptError describe(const std::exception& e) {
  const auto* c10e = dynamic_cast<const c10::Error*>(&e);
  std::string text = c10e ? c10e->what_without_backtrace() : e.what();
  ScriptError out;
  static const std::regex line_re("File \"<string>\", line ([0-9]+)");
  // The innermost frame of a traceback comes last.
  for (auto it = std::sregex_iterator(text.begin(), text.end(), line_re); it != std::sregex_iterator(); ++it)
    out.line = std::stoi((*it)[1].str());
  // An interpreter traceback ends with a Python-style "RuntimeError: ..." line; other messages say
  // what went wrong on their first line.
  static const std::regex exception_re("^[A-Za-z_.]*Error: ");
  std::istringstream lines(text);
  std::string line, first, last_exception;
  while (std::getline(lines, line)) {
    size_t begin = line.find_first_not_of(" \t");
    if (begin == std::string::npos) continue;
    line = line.substr(begin);
    if (first.empty()) first = line;
    if (std::regex_search(line, exception_re)) last_exception = line;
  }
  out.message = !last_exception.empty() ? last_exception : !first.empty() ? first : text;
  return out;
}

class NncBackend : public Backend {
 public:
  std::string name() const override { return "nnc"; }

  void prepare(const Graph& graph, const BackendOptions& options) override {
    ensure_custom_ops_registered();
    graph_ = graph;
    options_ = options;
    cuda_ = options.device == "cuda";
    stats_ = BackendStats{};
    warmed_.clear();
    unit_.reset();
    forward_ = nullptr;
    broken_ = false;
    specializations_ = 0;
    mutates_inputs_ = false;
    for_each_node(graph_.body, [&](const Node& n) {
      const OpSchema* s = find_op_schema(n.op);
      if (s && s->cls == OpClass::Extern) ++stats_.extern_calls;
      if (s && (s->cls == OpClass::InPlace || (n.op == OpId::BatchNorm && n.attr_bool("training", false))))
        mutates_inputs_ = true;
    });

    auto start = std::chrono::steady_clock::now();
    try {
      program_ = emit_torchscript(graph_, TorchScriptOptions{options.device});
    } catch (const TorchScriptEmitError& e) {
      CompileEvent ev;
      ev.kind = CompileEvent::Kind::Fallback;
      ev.code = "FB103";
      ev.message = std::string("nnc cannot run this graph as TorchScript: ") + e.what() + "; it runs eagerly";
      ev.hint = "declare every dim used in a shape attribute on some input's shape";
      ev.loc = e.loc();
      ev.op = e.op();
      stats_.record(ev);
      add_compile_time(start);
      return;
    }
    try {
      std::lock_guard<std::mutex> lock(nnc_mutex());
      auto unit = std::make_shared<torch::jit::CompilationUnit>();
      unit->define({}, program_.source, std::make_shared<TorchResolver>(), nullptr);
      forward_ = &unit->get_function("forward");
      unit_ = std::move(unit);
      stats_.graphs = 1;
      stats_.compiles = 1;
    } catch (const std::exception& e) {
      ScriptError err = describe(e);
      record_script_failure("FB104", "TorchScript rejected the emitted source: " + err.message,
                            "this is a bug in gbcheck's TorchScript emitter; report it with the model", err.line);
    }
    add_compile_time(start);
  }

  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs) override {
    if (!forward_ || broken_) return run_eagerly(inputs);
    std::lock_guard<std::mutex> lock(nnc_mutex());
    FuserSettings settings(cuda_, options_.dynamic);
    std::string sig = signature(inputs);
    if (!warmed_.count(sig)) {
      auto start = std::chrono::steady_clock::now();
      std::optional<ScriptError> failure = warm_up(inputs);
      add_compile_time(start);
      // A warm-up that raised is retried with the next call of this signature (when eager raised
      // too, the values were at fault, not the signature).
      if (failure) return after_failure(inputs, *failure);
      warmed_.insert(sig);
    }

    // The real call. Inputs the model mutates are saved first, so that a failed call can be
    // retried eagerly on the values it was given.
    std::vector<at::Tensor> saved;
    if (mutates_inputs_)
      for (const auto& t : inputs) saved.push_back(t.defined() ? storage_view(t).clone() : t);
    RngSnapshot rng(cuda_);
    std::ostringstream prints;
    CallTrace trace;
    std::vector<at::Tensor> outputs;
    try {
      PrintScope print_scope(&prints);
      TraceScope trace_scope(trace);
      outputs = call(inputs);
    } catch (const std::exception& e) {
      for (size_t i = 0; i < saved.size(); ++i)
        if (saved[i].defined()) storage_view(inputs[i]).copy_(saved[i]);
      rng.restore();
      return after_failure(inputs, describe(e));
    }
    if (options_.print_sink) *options_.print_sink << prints.str();
    classify(trace, inputs);
    return outputs;
  }

  const BackendStats& stats() const override { return stats_; }

 private:
  std::vector<at::Tensor> call(const std::vector<at::Tensor>& inputs) {
    std::vector<c10::IValue> stack(inputs.begin(), inputs.end());
    c10::IValue result = (*forward_)(std::move(stack));
    std::vector<at::Tensor> outputs;
    for (const auto& v : result.toTupleRef().elements()) outputs.push_back(v.toTensor());
    return outputs;
  }

  // Runs the profiling executor until it has optimized for this signature: one profiled call per
  // executor level, then the optimizing one. Copies of the inputs keep the caller's tensors (and
  // the running stats of batch_norm) untouched, the RNG is restored, prints are dropped.
  std::optional<ScriptError> warm_up(const std::vector<at::Tensor>& inputs) {
    RngSnapshot rng(cuda_);
    size_t calls = torch::jit::getNumProfiledRuns() + 1;
    try {
      PrintScope discard(nullptr);
      for (size_t i = 0; i < calls; ++i) call(replicas(inputs));
    } catch (const std::exception& e) {
      rng.restore();
      return describe(e);
    }
    rng.restore();
    std::shared_ptr<torch::jit::Graph> optimized = torch::jit::lastExecutedOptimizedGraph();
    int groups = optimized ? count_nodes(optimized->block(), c10::Symbol::fromQualString("prim::TensorExprGroup")) : 0;
    stats_.fusion_groups = std::max(stats_.fusion_groups, groups);
    if (groups == 0) {
      CompileEvent ev;
      ev.kind = CompileEvent::Kind::Fallback;
      ev.code = "FB101";
      ev.message = "nnc formed no fusion group: the graph ran on the TorchScript interpreter";
      ev.hint = "NNC fuses chains of two or more elementwise ops, sum/softmax/log_softmax, cat and inference "
                "batch_norm (matmul and conv2d too, on the CPU with static shapes), on float and int tensors; "
                "not uint8, nor float16/bfloat16 on the CPU, nor ops fed by item()";
      stats_.record(ev);
    }
    return std::nullopt;
  }

  // Turns what the real call did into events.
  void classify(const CallTrace& trace, const std::vector<at::Tensor>& inputs) {
    if (trace.unfused_fallbacks > 0) {
      CompileEvent ev;
      ev.kind = CompileEvent::Kind::Fallback;
      ev.code = "FB102";
      ev.message = "nnc's kernel guards rejected the inputs and the fallback path ran unfused on the "
                   "TorchScript interpreter";
      ev.hint = "new sizes or strides (data-dependent ones such as nonzero's count included) need a new "
                "specialization, whose first call is profiled unfused, and NNC stops specializing after " +
                std::to_string(kSpecializationDepth) + " per strategy step; check.dynamic: true compiles "
                "shape-generic kernels";
      stats_.record(ev);
    }
    if (trace.fused_fallback_depth > specializations_) {
      // Each nesting level of fallback functions is one more specialization the executor compiled.
      specializations_ = trace.fused_fallback_depth;
      stats_.compiles = specializations_ + 1;
      CompileEvent ev;
      ev.kind = CompileEvent::Kind::Recompile;
      ev.code = "RC101";
      ev.message = "nnc compiled specialization " + std::to_string(specializations_ + 1) +
                   " of its kernels: a guard on the input sizes or strides failed (shapes " + shapes_str(inputs) + ")";
      ev.hint = "check.dynamic: true makes NNC compile shape-generic kernels from the first call";
      stats_.record(ev);
    }
  }

  // TorchScript raised. When eager raises too, the model's computation fails on these inputs and
  // eager's OpError propagates. Otherwise NNC (or TorchScript) failed where eager does not: that is
  // a fallback, and the backend runs eagerly from now on.
  std::vector<at::Tensor> after_failure(const std::vector<at::Tensor>& inputs, const ScriptError& err) {
    std::vector<at::Tensor> outputs = run_eagerly(inputs);
    broken_ = true;
    record_script_failure("FB105", "nnc failed where eager does not: " + err.message,
                          "a failure inside LibTorch's TorchScript or NNC; the run fell back to eager", err.line);
    return outputs;
  }

  void record_script_failure(const std::string& code, const std::string& message, const std::string& hint, int line) {
    CompileEvent ev;
    ev.kind = CompileEvent::Kind::Fallback;
    ev.code = code;
    ev.message = message;
    ev.hint = hint;
    if (const TorchScriptLine* origin = program_.line(line)) {
      ev.loc = origin->loc;
      ev.op = origin->op;
    }
    stats_.record(ev);
  }

  std::vector<at::Tensor> run_eagerly(const std::vector<at::Tensor>& inputs) {
    EagerOptions eo;
    eo.print_sink = options_.print_sink;
    if (cuda_) eo.device = c10::Device(c10::DeviceType::CUDA, 0);
    return run_eager(graph_, inputs, eo);
  }

  void add_compile_time(std::chrono::steady_clock::time_point start) {
    stats_.compile_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }

  Graph graph_;
  BackendOptions options_;
  bool cuda_ = false;
  bool mutates_inputs_ = false;
  TorchScriptProgram program_;
  std::shared_ptr<torch::jit::CompilationUnit> unit_;
  torch::jit::Function* forward_ = nullptr;
  std::set<std::string> warmed_;  // input signatures already warmed up
  int specializations_ = 0;       // fallback nesting depth already seen running fused kernels
  bool broken_ = false;           // TorchScript failed where eager did not: run eagerly
  BackendStats stats_;
};

}  // namespace

std::unique_ptr<Backend> make_nnc_backend() { return std::make_unique<NncBackend>(); }

}  // namespace gbc
