#include "compiler/backends/gbc_cudagraphs_backend.h"

#include <stdexcept>
#include <utility>

#include "compiler/backends/gbc_backend.h"
#include "compiler/cuda/cuda_driver.h"
#include "compiler/ir/diagnostics.h"
#include "compiler/ir/op_schema.h"
#include "compiler/passes/effects.h"
#include "compiler/runtime/cuda_kernel_runner.h"
#include "compiler/runtime/graph_runtime.h"
#include "compiler/runtime/runtime_events.h"

namespace gbc {
namespace {

constexpr int kDevice = 0;  // gbc's CUDA tensors live on cuda:0

// What a replay assumes of each input: its copy into the static buffer is then well-defined.
struct InputGuard {
  std::vector<int64_t> sizes;
  at::ScalarType dtype = at::kFloat;
  c10::Device device = c10::Device(c10::kCPU);

  bool matches(const at::Tensor& t) const {
    return t.sizes() == at::IntArrayRef(sizes) && t.scalar_type() == dtype && t.device() == device;
  }
  std::string str() const {
    std::string s = std::string(c10::toString(dtype)) + "[";
    for (size_t d = 0; d < sizes.size(); ++d) s += (d ? ", " : "") + std::to_string(sizes[d]);
    return s + "] on " + device.str();
  }
};

// An instantiated CUDA graph and the stream it was captured on; destroyed together.
class CudaGraphExec {
 public:
  CudaGraphExec() {
    CudaDriver& driver = CudaDriver::get();
    driver.ensure_context(kDevice);
    // Non-blocking: ATen's allocations and work on the legacy stream during the capture neither
    // wait for it nor join it.
    driver.check(driver.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  }
  ~CudaGraphExec() {
    CudaDriver& driver = CudaDriver::get();
    if (exec_) driver.cuGraphExecDestroy(exec_);
    if (stream_) driver.cuStreamDestroy(stream_);
  }
  CudaGraphExec(const CudaGraphExec&) = delete;
  CudaGraphExec& operator=(const CudaGraphExec&) = delete;

  CUstream stream() const { return stream_; }

  /// Ends the capture begun on stream() and instantiates what it recorded.
  void end_capture() {
    CudaDriver& driver = CudaDriver::get();
    CUgraph graph = nullptr;
    driver.check(driver.cuStreamEndCapture(stream_, &graph), "cuStreamEndCapture");
    const CUresult result = driver.cuGraphInstantiate(&exec_, graph, 0);
    driver.cuGraphDestroy(graph);  // the executable graph is independent of it
    driver.check(result, "cuGraphInstantiate");
  }

  /// Ends a capture that failed; what it recorded is discarded.
  void abandon_capture() noexcept {
    CudaDriver& driver = CudaDriver::get();
    CUgraph graph = nullptr;
    if (driver.cuStreamEndCapture(stream_, &graph) == CUDA_SUCCESS && graph) driver.cuGraphDestroy(graph);
  }

  /// Replays on the legacy default stream, after the work ATen queued there.
  void launch() const {
    CudaDriver& driver = CudaDriver::get();
    driver.ensure_context(kDevice);
    driver.check(driver.cuGraphLaunch(exec_, nullptr), "cuGraphLaunch");
  }

 private:
  CUstream stream_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

std::vector<at::Tensor> copies(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> out;
  out.reserve(tensors.size());
  for (const at::Tensor& t : tensors) out.push_back(t.clone());
  return out;
}

// ATen steps that only make a view (new sizes and strides over the same storage) launch no device
// work, so a capture loses nothing by leaving them out: replays write the storage they view.
// reshape and flatten copy when the input's strides do not allow a view, so they are not among them.
bool launches_no_device_work(const StepDescription& step) {
  if (step.kind == StepDescription::Kind::Kernel) return false;
  const OpSchema* schema = find_op_schema(step.name);
  return schema && schema->cls == OpClass::View && step.name != "reshape" && step.name != "flatten";
}

// One input signature's captured graph, with the buffers its replays read and write.
struct CapturedGraph {
  std::vector<InputGuard> guards;
  std::vector<at::Tensor> static_inputs;
  std::vector<at::Tensor> static_outputs;
  std::vector<at::Tensor> keep_alive;  // every tensor the captured launches touch
  std::unique_ptr<CudaGraphExec> exec;  // null: this signature runs as plain gbc (FB005 reported)

  bool matches(const std::vector<at::Tensor>& inputs) const {
    if (inputs.size() != guards.size()) return false;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!guards[i].matches(inputs[i])) return false;
    return true;
  }
};

std::string signature_text(const std::vector<at::Tensor>& inputs) {
  std::string s;
  for (const at::Tensor& t : inputs) {
    InputGuard g{t.sizes().vec(), t.scalar_type(), t.device()};
    s += (s.empty() ? "" : ", ") + g.str();
  }
  return "(" + s + ")";
}

class GbcCudaGraphsBackend : public Backend {
 public:
  std::string name() const override { return "gbc-cudagraphs"; }

  void prepare(const Graph& graph, const BackendOptions& options) override {
    device_ = options.device;
    graph_limit_ = std::max(1, options.cache_size_limit);
    gbc_ = make_gbc_backend();
    // A replay runs the captured launches without gbc's runtime, which could then not notice a
    // changed param: every step reading one stays in the graph instead of being computed once.
    BackendOptions gbc_options = options;
    gbc_options.disabled_passes.push_back("fold_params");
    gbc_->prepare(graph, gbc_options);
    // The inputs a call writes (running stats, in-place ops): a capture and a replay write the
    // static buffers, so what they wrote is copied back into the caller's tensors.
    const AliasAnalysis alias(graph);
    written_.clear();
    for (const GraphInput& in : graph.inputs) written_.push_back(alias.may_be_mutated(in.value));
    own_ = BackendStats{};
    graphs_.clear();
    limit_reported_ = false;
  }

  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs) override {
    GBC_INTERNAL_ASSERT(gbc_ != nullptr, "gbc-cudagraphs: run before prepare");
    if (device_ != "cuda")
      throw std::runtime_error("gbc-cudagraphs needs device cuda (it replays GPU kernel launches), got device " + device_ +
                               "; run with --device cuda on a machine with an NVIDIA GPU, or use the gbc backend");
    for (CapturedGraph& g : graphs_) {
      if (!g.matches(inputs)) continue;
      if (!g.exec) return gbc_->run(inputs);
      for (size_t i = 0; i < inputs.size(); ++i) g.static_inputs[i].copy_(inputs[i]);
      g.exec->launch();
      write_back(g.static_inputs, inputs);
      return copies(g.static_outputs);
    }
    if (static_cast<int>(graphs_.size()) >= graph_limit_) {
      if (!limit_reported_) {
        limit_reported_ = true;
        report(CompileEvent::Kind::Fallback, "FB006",
               "gbc-cudagraphs: a call with a new input signature " + signature_text(inputs) + " after " +
                   std::to_string(graphs_.size()) + " captured ones (cache_size_limit) runs without a CUDA graph, as do later new ones",
               "call the model with fewer input signatures, raise check.cache_size_limit, or use the gbc backend for "
               "changing shapes");
      }
      return gbc_->run(inputs);
    }
    return capture(inputs);
  }

  const BackendStats& stats() const override {
    merged_ = gbc_ ? gbc_->stats() : BackendStats{};
    for (const CompileEvent& e : own_.events) merged_.record(e);
    return merged_;
  }

 private:
  // Captures a graph for this input signature (or records that it cannot be captured).
  std::vector<at::Tensor> capture(const std::vector<at::Tensor>& inputs) {
    graphs_.emplace_back();
    CapturedGraph& g = graphs_.back();
    for (const at::Tensor& t : inputs) {
      g.guards.push_back({t.sizes().vec(), t.scalar_type(), t.device()});
      g.static_inputs.push_back(t.clone(at::MemoryFormat::Contiguous));
    }
    // Compiles every kernel for this signature (before its launch) and leaves the allocator warm.
    // It runs on the static buffers, so the caller's inputs still hold what the call must start from.
    std::vector<at::Tensor> outputs = gbc_->run(g.static_inputs);
    if (std::string why = why_not_capturable(); !why.empty()) {
      write_back(g.static_inputs, inputs);
      g.static_inputs.clear();
      report(CompileEvent::Kind::Fallback, "FB005",
             "gbc-cudagraphs: the graph runs without a CUDA graph for inputs " + signature_text(inputs) + ": " + why,
             "only graphs of fused kernels (and views) are captured; see them with gbcheck explain --backend gbc");
      return outputs;
    }
    CudaDriver& driver = CudaDriver::get();
    driver.ensure_context(kDevice);
    driver.check(driver.cuCtxSynchronize(), "cuCtxSynchronize");
    auto exec = std::make_unique<CudaGraphExec>();
    std::vector<at::Tensor> keep_alive;
    // Relaxed: ATen may still call cudaMalloc for the outputs of the captured run.
    driver.check(driver.cuStreamBeginCapture(exec->stream(), CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture");
    try {
      CudaLaunchCapture launches(exec->stream(), &keep_alive);
      g.static_outputs = gbc_->run(g.static_inputs);
    } catch (...) {
      exec->abandon_capture();
      graphs_.pop_back();
      throw;
    }
    exec->end_capture();
    g.exec = std::move(exec);
    g.keep_alive = std::move(keep_alive);
    // The warm-up call wrote the buffers of written inputs: this call's replay starts from the caller's.
    for (size_t i = 0; i < inputs.size(); ++i)
      if (written_[i]) g.static_inputs[i].copy_(inputs[i]);
    g.exec->launch();
    write_back(g.static_inputs, inputs);
    return copies(g.static_outputs);
  }

  // Copies what a call wrote into the static buffers of written inputs back into the caller's.
  void write_back(const std::vector<at::Tensor>& static_inputs, const std::vector<at::Tensor>& inputs) const {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (written_[i]) inputs[i].copy_(static_inputs[i]);
  }

  // Empty when the call just made ran one gbc region of fused kernels (and views) alone: the
  // launches are then all the device work there is, and all of it is captured.
  std::string why_not_capturable() const {
    const BackendStats& s = gbc_->stats();
    if (s.graph_breaks > 0) return std::to_string(s.graph_breaks) + " graph break(s)";
    if (s.fallbacks > 0) return "gbc reported " + std::to_string(s.fallbacks) + " fallback(s)";
    const auto* runtime = dynamic_cast<const GraphRuntime*>(gbc_.get());
    GBC_INTERNAL_ASSERT(runtime != nullptr, "gbc-cudagraphs: the gbc backend is not a GraphRuntime");
    const ProgramDescription program = runtime->describe();
    if (program.segments.size() != 1 || program.segments[0].island) return "the program is not one compiled graph";
    const SegmentDescription& seg = program.segments[0];
    // Several entries are one per specialization the signatures so far compiled; this call's is one of them.
    for (const EntryDescription& entry : seg.entries)
      for (const StepDescription& step : entry.region.steps)
        if (step.kind != StepDescription::Kind::Kernel && !launches_no_device_work(step))
          return "step '" + step.name + "' runs on ATen (" + StepDescription::kind_name(step.kind) + ")";
    return "";
  }

  void report(CompileEvent::Kind kind, const std::string& code, const std::string& message, const std::string& hint) {
    CompileEvent e;
    e.kind = kind;
    e.code = code;
    e.message = message;
    e.hint = hint;
    report_event(own_, e);
  }

  std::string device_ = "cpu";
  std::unique_ptr<Backend> gbc_;
  BackendStats own_;
  mutable BackendStats merged_;
  int graph_limit_ = 8;
  bool limit_reported_ = false;
  std::vector<CapturedGraph> graphs_;  // one per input signature seen, in order
  std::vector<bool> written_;          // per graph input: whether a call may write it
};

}  // namespace

std::unique_ptr<Backend> make_gbc_cudagraphs_backend() { return std::make_unique<GbcCudaGraphsBackend>(); }

}  // namespace gbc
