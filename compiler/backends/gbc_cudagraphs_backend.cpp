#include "compiler/backends/gbc_cudagraphs_backend.h"

#include <stdexcept>
#include <utility>

#include "compiler/backends/gbc_backend.h"
#include "compiler/cuda/cuda_driver.h"
#include "compiler/ir/diagnostics.h"
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

class GbcCudaGraphsBackend : public Backend {
 public:
  std::string name() const override { return "gbc-cudagraphs"; }

  void prepare(const Graph& graph, const BackendOptions& options) override {
    device_ = options.device;
    gbc_ = make_gbc_backend();
    // A replay runs the captured launches without gbc's runtime, which could then not notice a
    // changed param: every step reading one stays in the graph instead of being computed once.
    BackendOptions gbc_options = options;
    gbc_options.disabled_passes.push_back("fold_params");
    gbc_->prepare(graph, gbc_options);
    own_ = BackendStats{};
    captured_.reset();
    guards_.clear();
    static_inputs_.clear();
    static_outputs_.clear();
    keep_alive_.clear();
    capturable_ = true;
  }

  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs) override {
    GBC_INTERNAL_ASSERT(gbc_ != nullptr, "gbc-cudagraphs: run before prepare");
    if (device_ != "cuda")
      throw std::runtime_error("gbc-cudagraphs needs device cuda (it replays GPU kernel launches), got device " + device_ +
                               "; run with --device cuda on a machine with an NVIDIA GPU, or use the gbc backend");
    if (!capturable_) return gbc_->run(inputs);
    if (!captured_) return capture(inputs);
    if (std::string miss = guard_miss(inputs); !miss.empty()) {
      report(CompileEvent::Kind::Fallback, "FB006",
             "gbc-cudagraphs: a call with other inputs than the captured graph's (" + miss + ") runs without it",
             "call the model with one input signature, or use the gbc backend for changing shapes");
      return gbc_->run(inputs);
    }
    for (size_t i = 0; i < inputs.size(); ++i) static_inputs_[i].copy_(inputs[i]);
    captured_->launch();
    return copies(static_outputs_);
  }

  const BackendStats& stats() const override {
    merged_ = gbc_ ? gbc_->stats() : BackendStats{};
    for (const CompileEvent& e : own_.events) merged_.record(e);
    return merged_;
  }

 private:
  std::vector<at::Tensor> capture(const std::vector<at::Tensor>& inputs) {
    guards_.clear();
    static_inputs_.clear();
    for (const at::Tensor& t : inputs) {
      guards_.push_back({t.sizes().vec(), t.scalar_type(), t.device()});
      static_inputs_.push_back(t.clone(at::MemoryFormat::Contiguous));
    }
    // Compiles every kernel (before its launch) and leaves the allocator warm.
    std::vector<at::Tensor> outputs = gbc_->run(static_inputs_);
    if (std::string why = why_not_capturable(); !why.empty()) {
      capturable_ = false;
      static_inputs_.clear();
      report(CompileEvent::Kind::Fallback, "FB005", "gbc-cudagraphs: the graph runs without a CUDA graph: " + why,
             "only graphs of fused kernels alone are captured; see them with gbcheck explain --backend gbc");
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
      static_outputs_ = gbc_->run(static_inputs_);
    } catch (...) {
      exec->abandon_capture();
      throw;
    }
    exec->end_capture();
    captured_ = std::move(exec);
    keep_alive_ = std::move(keep_alive);
    captured_->launch();
    return copies(static_outputs_);
  }

  // Empty when one gbc region of fused kernels alone served the call: the launches are then all the
  // work there is, and all of it is captured.
  std::string why_not_capturable() const {
    const BackendStats& s = gbc_->stats();
    if (s.graph_breaks > 0) return std::to_string(s.graph_breaks) + " graph break(s)";
    if (s.fallbacks > 0) return "gbc reported " + std::to_string(s.fallbacks) + " fallback(s)";
    const auto* runtime = dynamic_cast<const GraphRuntime*>(gbc_.get());
    GBC_INTERNAL_ASSERT(runtime != nullptr, "gbc-cudagraphs: the gbc backend is not a GraphRuntime");
    const ProgramDescription program = runtime->describe();
    if (program.segments.size() != 1 || program.segments[0].island) return "the program is not one compiled graph";
    const SegmentDescription& seg = program.segments[0];
    if (seg.entries.size() != 1) return std::to_string(seg.entries.size()) + " compiled entries";
    for (const StepDescription& step : seg.entries[0].region.steps)
      if (step.kind != StepDescription::Kind::Kernel)
        return "step '" + step.name + "' runs on ATen (" + StepDescription::kind_name(step.kind) + ")";
    return "";
  }

  std::string guard_miss(const std::vector<at::Tensor>& inputs) const {
    if (inputs.size() != guards_.size())
      return std::to_string(inputs.size()) + " inputs, captured with " + std::to_string(guards_.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (guards_[i].matches(inputs[i])) continue;
      const at::Tensor& t = inputs[i];
      InputGuard got{t.sizes().vec(), t.scalar_type(), t.device()};
      return "input " + std::to_string(i) + " is " + got.str() + ", captured as " + guards_[i].str();
    }
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
  bool capturable_ = true;
  std::vector<InputGuard> guards_;
  std::vector<at::Tensor> static_inputs_;
  std::vector<at::Tensor> static_outputs_;
  std::vector<at::Tensor> keep_alive_;  // every tensor the captured launches touch
  std::unique_ptr<CudaGraphExec> captured_;
};

}  // namespace

std::unique_ptr<Backend> make_gbc_cudagraphs_backend() { return std::make_unique<GbcCudaGraphsBackend>(); }

}  // namespace gbc
