#include "compiler/runtime/cuda_kernel_runner.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "compiler/codegen/cuda_codegen.h"
#include "compiler/codegen/cuda_tuning.h"
#include "compiler/cuda/cuda_driver.h"
#include "compiler/cuda/cuda_module.h"
#include "compiler/cuda/nvrtc_compiler.h"
#include "compiler/ir/diagnostics.h"
#include "compiler/support/compiler_output.h"
#include "compiler/support/log.h"
#include "compiler/support/trace.h"

namespace gbc {
namespace {

// gbc's CUDA tensors live on cuda:0 (graph_runtime.cpp).
constexpr int kDevice = 0;

thread_local CudaLaunchCapture* active_capture = nullptr;

struct DeviceInfo {
  int arch = 0;            // compute capability, major * 10 + minor
  int multiprocessors = 0;
};

// Queried once: both are fixed for the process. Throws CudaError when the driver is unusable.
const DeviceInfo& device_info() {
  static const DeviceInfo info = [] {
    CudaDriver& driver = CudaDriver::get();
    DeviceInfo d;
    d.arch = driver.compute_capability(kDevice);
    CUdevice handle = 0;
    driver.check(driver.cuDeviceGet(&handle, kDevice), "cuDeviceGet");
    driver.check(driver.cuDeviceGetAttribute(&d.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, handle),
                 "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)");
    return d;
  }();
  return info;
}

// Device memory a kernel keeps across launches: the counters and parts of split reductions
// (cuda_codegen.h). It only grows; the counters start zeroed and every launch leaves them so.
// Freed with the last launcher of the module.
class SplitWorkspace {
 public:
  SplitWorkspace() = default;
  SplitWorkspace(const SplitWorkspace&) = delete;
  SplitWorkspace& operator=(const SplitWorkspace&) = delete;
  ~SplitWorkspace() {
    if (!ptr_) return;
    // Errors are ignored: at process exit the driver may already be torn down.
    CudaDriver& driver = CudaDriver::get();
    CUcontext current = nullptr;
    if (driver.cuCtxGetCurrent(&current) == CUDA_SUCCESS && !current) {
      try {
        driver.ensure_context(kDevice);
      } catch (const CudaError&) {
        return;
      }
    }
    driver.cuMemFree(ptr_);
  }

  /// At least `bytes` of zeroed device memory (zeroed when allocated, before any launch uses it).
  void* reserve(size_t bytes) {
    if (bytes <= bytes_) return reinterpret_cast<void*>(ptr_);
    CudaDriver& driver = CudaDriver::get();
    driver.ensure_context(kDevice);
    if (ptr_) {
      // Launches queued on the old memory finish before it goes.
      driver.check(driver.cuCtxSynchronize(), "cuCtxSynchronize");
      driver.cuMemFree(ptr_);
      ptr_ = 0;
      bytes_ = 0;
    }
    const size_t rounded = (bytes + 4095) / 4096 * 4096;
    driver.check(driver.cuMemAlloc(&ptr_, rounded), "cuMemAlloc (split reduction workspace)");
    driver.check(driver.cuMemsetD8(ptr_, 0, rounded), "cuMemsetD8 (split reduction workspace)");
    bytes_ = rounded;
    return reinterpret_cast<void*>(ptr_);
  }

 private:
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

// Launches one kernel of a loaded module with the arguments the region filled.
class CudaLauncher {
 public:
  CudaLauncher(std::shared_ptr<CudaModule> module, kir::Kernel kernel, int multiprocessors)
      : module_(std::move(module)),
        kernel_(std::move(kernel)),
        layout_(codegen::cuda_row_layout(kernel_)),
        multiprocessors_(multiprocessors),
        workspace_(std::make_shared<SplitWorkspace>()) {
    function_ = module_->function(kernel_.name);
    split_blocks_per_multiprocessor_ = resident_split_blocks();
  }

  void operator()(const GbcKernelArgs* args) const {
    GbcCudaKernelArgs cuda = codegen::make_cuda_args(kernel_, *args);
    // A kernel of one row class has no code for the others: a call of another would compute
    // nonsense, silently (kernel_region.cpp picks variants by class; this is its check).
    if (kernel_.cuda_rows != kir::CudaRows::All) {
      const kir::CudaRows call = codegen::cuda_call_row_class(kernel_, layout_, cuda, multiprocessors_);
      GBC_INTERNAL_ASSERT(call == kernel_.cuda_rows, "CUDA kernel " + kernel_.name + " holds the " +
                                                         kir::cuda_rows_name(kernel_.cuda_rows) +
                                                         " row schedule only, launched for a call of class " +
                                                         kir::cuda_rows_name(call));
    }
    codegen::CudaLaunchShape shape =
        codegen::cuda_launch_shape(kernel_, cuda, multiprocessors_, split_blocks_per_multiprocessor_);
    if (shape.splits == 1 && kernel_.kind == kir::KernelKind::Reduction && codegen::cuda_tuning().resident_grid) {
      // One wave of blocks, each walking rows (cuda_tuning.h).
      const int64_t resident = int64_t{resident_blocks(shape.block_x * shape.block_y)} * multiprocessors_;
      shape.grid = static_cast<unsigned>(std::clamp<int64_t>(resident, 1, shape.grid));
    }
    if (shape.splits > 1) {
      cuda.splits = shape.splits;
      cuda.workspace = workspace_->reserve(codegen::cuda_split_workspace_bytes(cuda.outer, shape.splits));
    }
    CUstream stream = nullptr;  // the legacy default stream, ATen's (see the header)
    if (CudaLaunchCapture* capture = CudaLaunchCapture::active()) {
      stream = capture->stream();
      capture->count_launch();
    }
    void* params[] = {&cuda};
    module_->launch(function_, Dim3{shape.grid, 1, 1}, Dim3{shape.block_x, shape.block_y, 1}, 0, stream, params);
  }

 private:
  // Blocks of a split launch resident per multiprocessor (registers and shared memory decide);
  // the parts of split rows fill exactly one wave of them.
  int resident_split_blocks() const {
    if (kernel_.kind != kir::KernelKind::Reduction || !layout_.splittable) return 4;
    int blocks = 0;
    const CudaDriver& driver = CudaDriver::get();
    const CUresult r = driver.cuOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, function_, static_cast<int>(codegen::cuda_split_threads(kernel_)), 0);
    return r == CUDA_SUCCESS && blocks > 0 ? blocks : 4;
  }

  // Blocks of `threads` threads resident per multiprocessor, asked of the driver once per size.
  int resident_blocks(unsigned threads) const {
    for (const auto& [t, blocks] : resident_)
      if (t == threads) return blocks;
    int blocks = 0;
    const CUresult r =
        CudaDriver::get().cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function_, static_cast<int>(threads), 0);
    blocks = r == CUDA_SUCCESS && blocks > 0 ? blocks : 1;
    resident_.emplace_back(threads, blocks);
    return blocks;
  }

  std::shared_ptr<CudaModule> module_;  // shared by the module's launchers; unloaded with the last
  kir::Kernel kernel_;
  codegen::CudaRowLayout layout_;  // of kernel_, for the row class check
  int multiprocessors_;
  int split_blocks_per_multiprocessor_ = 4;
  std::shared_ptr<SplitWorkspace> workspace_;  // shared by the copies of this launcher
  CUfunction function_ = nullptr;
  mutable std::vector<std::pair<unsigned, int>> resident_;  // resident_blocks' answers
};

}  // namespace

NativeModule compile_cuda_module(const std::vector<kir::Kernel>& kernels, const std::string& module, bool use_cache,
                                 const std::string& cache_dir) {
  const auto start = std::chrono::steady_clock::now();
  NativeModule m;
  std::string traced_source;  // for the trace's kernel event
  bool traced_cache_hit = false;
  CudaDriver& driver = CudaDriver::get();
  const NvrtcCompiler& nvrtc = NvrtcCompiler::get();
  if (!driver.available()) {
    m.error = "the CUDA driver is unavailable: " + driver.unavailable_reason();
    return m;
  }
  if (!nvrtc.available()) {
    m.error = "NVRTC is unavailable: " + first_error_line(nvrtc.unavailable_reason());
    return m;
  }
  for (const kir::Kernel& k : kernels) {
    std::string reason = codegen::cuda_unsupported_reason(k);
    if (!reason.empty()) {
      m.error = reason;
      return m;
    }
  }
  try {
    const DeviceInfo& device = device_info();
    const std::string source = codegen::generate_cuda_source(kernels, module);
    traced_source = source;
    GBC_LOG_CHANNEL(output_code) << module << ": generated CUDA source\n" << source;
    codegen::CudaPtx ptx = codegen::compile_cuda_ptx(source, device.arch, use_cache, cache_dir);
    traced_cache_hit = ptx.cache_hit;
    if (!ptx.build.ok) {
      m.error = first_error_line(ptx.build.log);
      GBC_LOG_CHANNEL(kernels) << module << ": NVRTC failed for sm_" << device.arch << "\n" << ptx.build.log;
      return m;
    }
    auto loaded = std::make_shared<CudaModule>(ptx.build.binary, kDevice);
    for (const kir::Kernel& k : kernels) m.functions.push_back(CudaLauncher(loaded, k, device.multiprocessors));
    m.ok = true;
    GBC_LOG_CHANNEL(kernels) << module << ": " << (ptx.cache_hit ? "PTX from the cache" : "compiled") << " for sm_"
                             << device.arch << ", loaded on cuda:" << kDevice;
  } catch (const CudaError& e) {
    m.functions.clear();
    m.error = first_error_line(e.what());
    GBC_LOG_CHANNEL(kernels) << module << ": the driver rejected the module: " << e.what();
  }
  m.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (trace::enabled()) {
    std::vector<std::string> names;
    for (const kir::Kernel& k : kernels) names.push_back(k.name);
    trace::emit("kernel", {{"module", module}, {"device", "cuda"}, {"kernels", names}, {"source", traced_source}, {"ok", m.ok},
                           {"cache_hit", traced_cache_hit}, {"compile_ms", m.compile_ms}, {"error", m.error}});
  }
  return m;
}

RefineVariant cuda_refine_variant(int multiprocessors) {
  return [multiprocessors](kir::Kernel& kernel, int64_t outer, int64_t inner, const std::vector<void*>* data) {
    if (kernel.kind != kir::KernelKind::Reduction) return;
    const codegen::CudaRowLayout layout = codegen::cuda_row_layout(kernel);
    const bool aligned = !data || codegen::cuda_vector_aligned(kernel, layout, data->data());
    kernel.cuda_rows = codegen::cuda_row_class(layout, outer, inner, aligned, multiprocessors);
  };
}

KernelRegionOptions cuda_kernel_region_options(const CompileContext& ctx) {
  KernelRegionOptions o;
  o.label = ctx.label;
  const bool use_cache = ctx.options.use_cache;
  const std::string cache_dir = ctx.options.cache_dir.empty() ? "" : ctx.options.cache_dir + "/cuda";
  o.native = [use_cache, cache_dir](const std::vector<kir::Kernel>& kernels, const std::string& module) {
    return compile_cuda_module(kernels, module, use_cache, cache_dir);
  };
  o.on_buffer = [](const at::Tensor& tensor) {
    if (CudaLaunchCapture* capture = CudaLaunchCapture::active()) capture->retain(tensor);
  };
  o.refine_variant = [](kir::Kernel& kernel, int64_t outer, int64_t inner, const std::vector<void*>* data) {
    int multiprocessors = 0;
    try {
      multiprocessors = device_info().multiprocessors;
    } catch (const CudaError&) {
      return;  // no usable device: the module will not load (FB001), whatever the variant holds
    }
    cuda_refine_variant(multiprocessors)(kernel, outer, inner, data);
  };
  o.compile_hint = "see NVRTC's full output with --log kernels; GBCHECK_NVRTC names the NVRTC library";
  return o;
}

CudaLaunchCapture::CudaLaunchCapture(CUstream stream, std::vector<at::Tensor>* keep_alive)
    : stream_(stream), keep_alive_(keep_alive) {
  GBC_INTERNAL_ASSERT(active_capture == nullptr, "CUDA launch captures do not nest");
  active_capture = this;
}

CudaLaunchCapture::~CudaLaunchCapture() { active_capture = nullptr; }

CudaLaunchCapture* CudaLaunchCapture::active() { return active_capture; }

}  // namespace gbc
