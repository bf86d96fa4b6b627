#include "harness/bench/bench_runner.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

#include <time.h>

#include <algorithm>
#include <chrono>

#include "compiler/aten/eager_executor.h"
#include "compiler/backends/gbc_backend.h"
#include "compiler/cuda/cuda_driver.h"
#include "compiler/cuda/cuda_event.h"
#include "compiler/passes/effects.h"
#include "compiler/runtime/backend_device.h"
#include "compiler/runtime/graph_runtime.h"
#include "harness/bench/reused_allocations.h"
#include "harness/inputs/input_generator.h"
#include "harness/runner/check_report.h"
#include "harness/version.h"

namespace gbc {
namespace {

using Clock = std::chrono::steady_clock;

// Milliseconds of the wall clock or of the process's CPU time (BenchOptions::cpu_clock) since
// construction; only that clock is read, so the other's read is not timed.
class Stopwatch {
 public:
  explicit Stopwatch(bool cpu_clock) : cpu_(cpu_clock), start_ms_(now_ms()) {}
  double elapsed_ms() const { return now_ms() - start_ms_; }

 private:
  double now_ms() const {
    if (!cpu_) return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
  }
  bool cpu_;
  double start_ms_;
};

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// GPU work is asynchronous: a timed call starts on an idle device and ends when its last kernel
// (gbc's, on the legacy stream, or ATen's) has finished. cuCtxSynchronize waits for every stream of
// the primary context, which ATen and gbc share.
void synchronize(const std::string& device) {
  if (device != "cuda") return;
  CudaDriver& driver = CudaDriver::get();
  driver.ensure_context(0);
  driver.check(driver.cuCtxSynchronize(), "cuCtxSynchronize");
}

// Per graph input: whether every call may get the same tensor. A model's params are the same
// tensors on every call, as a module's parameters are (gbc computes what depends on them alone
// once, docs/backends.md); inputs, and params the model may write into, are fresh for every call
// so that every call computes the same thing.
std::vector<bool> held_across_calls(const Graph& g) {
  const AliasAnalysis aliases(g);
  std::vector<bool> out;
  for (const GraphInput& in : g.inputs)
    out.push_back(in.role == GraphInput::Role::Param && !aliases.may_be_mutated(in.value));
  return out;
}

// One backend over the case: warm-up, timed runs, profiled runs. Inputs are fresh copies for
// every call (models may mutate them) and params the same tensors (held_across_calls); the RNG is
// reseeded, as the check does. None of it is inside the timed region.
BenchResult measure(Backend& backend, const std::string& name, const TestCase& tc, const std::vector<bool>& held,
                    const BenchOptions& o) {
  BenchResult r;
  r.backend = name;
  const std::vector<at::Tensor> params = tc.fresh_inputs();
  auto call = [&](bool timed) -> double {
    std::vector<at::Tensor> inputs = tc.fresh_inputs();
    for (size_t i = 0; i < inputs.size(); ++i)
      if (held[i]) inputs[i] = params[i];
    at::manual_seed(tc.seed);
    synchronize(o.backend_options.device);
    const Stopwatch watch(o.cpu_clock);
    std::vector<at::Tensor> out = backend.run(inputs);
    synchronize(o.backend_options.device);
    double ms = watch.elapsed_ms();
    return timed ? ms : 0.0;
  };
  // On the GPU the timed calls are not synchronized one by one: each is timed by CUDA events on
  // the stream it runs on, the host running ahead as it does in a real program (and as PyTorch's
  // benchmarks time torch.compile), so that launch latency and host work hide behind the device's
  // work wherever they would in use.
  const bool cuda = o.backend_options.device == "cuda";
  auto timed_cuda_calls = [&]() {
    std::vector<std::pair<CudaEvent, CudaEvent>> events;
    events.reserve(static_cast<size_t>(o.repeat));
    for (int i = 0; i < o.repeat; ++i) {
      std::vector<at::Tensor> inputs = tc.fresh_inputs();
      for (size_t k = 0; k < inputs.size(); ++k)
        if (held[k]) inputs[k] = params[k];
      at::manual_seed(tc.seed);
      events.emplace_back();
      events.back().first.record();
      std::vector<at::Tensor> out = backend.run(inputs);
      events.back().second.record();
    }
    for (const auto& [start, end] : events) r.run_ms.push_back(end.elapsed_since(start));
  };
  try {
    for (int i = 0; i < std::max(1, o.warmup); ++i) {
      double ms = call(true);
      if (i == 0) r.first_call_ms = ms;
    }
    if (cuda) timed_cuda_calls();
    else
      for (int i = 0; i < o.repeat; ++i) r.run_ms.push_back(call(true));
    if (!cuda) {
      ReusedAllocations reuse;
      for (int i = 0; reuse.active() && i < std::max(1, o.warmup); ++i) call(false);
      for (int i = 0; reuse.active() && i < o.repeat; ++i) r.reused_run_ms.push_back(call(true));
    }
    auto* runtime = dynamic_cast<GraphRuntime*>(&backend);
    if (o.profile && runtime) {
      Profiler profiler;
      // Each step's row is its device time: the profiled calls synchronize around every step.
      // (Errors are not thrown from here, a destructor's; the next call reports them.)
      if (cuda)
        profiler.set_synchronize([&] {
          try {
            synchronize(o.backend_options.device);
          } catch (const std::exception&) {
          }
        });
      runtime->set_profiler(&profiler);
      const Stopwatch watch(o.cpu_clock);
      for (int i = 0; i < o.repeat; ++i) call(false);
      r.profiled_ms = watch.elapsed_ms();
      runtime->set_profiler(nullptr);
      r.profile = profiler.rows();
    }
  } catch (const InternalError&) {
    throw;
  } catch (const std::exception& e) {
    r.error = first_line(e.what());
  }
  r.median_ms = median(r.run_ms);
  r.min_ms = r.run_ms.empty() ? 0.0 : *std::min_element(r.run_ms.begin(), r.run_ms.end());
  r.reused_median_ms = median(r.reused_run_ms);
  r.stats = backend.stats();
  return r;
}

// Median time of a device copy moving `bytes` (half read, half written), timed as the backends are.
double copy_time_ms(int64_t bytes, c10::Device device, const BenchOptions& o) {
  const int64_t n = bytes / 2;
  if (n <= 0) return 0.0;
  const at::Tensor src = at::ones({n}, at::TensorOptions().dtype(at::kByte).device(device));
  at::Tensor dst = at::empty_like(src);
  const std::string& dev = o.backend_options.device;
  for (int i = 0; i < std::max(1, o.warmup); ++i) dst.copy_(src);
  std::vector<double> times;
  if (dev == "cuda") {
    std::vector<std::pair<CudaEvent, CudaEvent>> events(static_cast<size_t>(o.repeat));
    for (auto& [start, end] : events) {
      start.record();
      dst.copy_(src);
      end.record();
    }
    for (const auto& [start, end] : events) times.push_back(end.elapsed_since(start));
  } else {
    for (int i = 0; i < o.repeat; ++i) {
      const Stopwatch watch(o.cpu_clock);
      dst.copy_(src);
      times.push_back(watch.elapsed_ms());
    }
  }
  return median(times);
}

}  // namespace

std::string format_speedup(double speedup) {
  char buf[64];
  std::snprintf(buf, sizeof buf, speedup >= 0.1 || speedup == 0.0 ? "%.2fx" : "%.3gx", speedup);
  return buf;
}

std::vector<std::string> BenchReport::failures() const {
  std::vector<std::string> out;
  const double eager_ms = results.empty() ? 0.0 : results.front().median_ms;
  for (const BenchResult& r : results) {
    if (!r.error.empty()) {
      out.push_back(r.backend + ": raised: " + r.error);
    } else if (r.below_min_speedup()) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "%s: speedup %s is below check.expect.min_speedup %.2f (eager %.3f ms, %s %.3f ms)",
                    r.backend.c_str(), format_speedup(r.speedup).c_str(), *r.min_speedup, eager_ms, r.backend.c_str(),
                    r.median_ms);
      out.push_back(buf);
    }
    if (fullgraph && r.stats.graph_breaks > 0)
      out.push_back(r.backend + ": breaks the graph " + std::to_string(r.stats.graph_breaks) +
                    (r.stats.graph_breaks == 1 ? " time" : " times") + " under --fullgraph (`gbcheck explain` says where)");
  }
  return out;
}

int BenchReport::exit_code() const { return failures().empty() ? kExitPass : kExitDivergence; }

BenchReport run_bench(const Model& model, const BenchOptions& o) {
  BenchReport rep;
  rep.model_name = model.name;
  rep.model_path = model.path;
  rep.device = o.backend_options.device;
  rep.torch_version = TORCH_VERSION;
  rep.gbcheck_version = kGbcheckVersion;
  rep.case_index = o.case_index;
  rep.warmup = o.warmup;
  rep.repeat = o.repeat;
  rep.cpu_clock = o.cpu_clock;
  rep.fullgraph = o.fullgraph;
  rep.injected_fault = o.backend_options.inject_fault;
  rep.eager_threads = at::get_num_threads();
  rep.kernel_threads = gbc_kernel_threads();

  c10::Device device = backend_device(o.backend_options);
  InputGenerator gen(model, device);
  TestCase tc = gen.make_case(o.case_index);
  rep.dims = tc.dims;
  try {
    at::manual_seed(tc.seed);
    run_eager(model.graph, tc.fresh_inputs());
  } catch (const OpError& e) {
    Diagnostics d;
    d.error(e.loc(), "the eager reference fails on case " + std::to_string(o.case_index) + ": " + e.message(),
            "bench another case with --case, or constrain the inputs' values");
    throw ModelError(d);
  }

  {
    at::manual_seed(tc.seed);
    for (const at::Tensor& t : tc.fresh_inputs()) rep.bytes_moved += static_cast<int64_t>(t.nbytes());
    for (const at::Tensor& t : run_eager(model.graph, tc.fresh_inputs())) rep.bytes_moved += static_cast<int64_t>(t.nbytes());
    rep.copy_ms = copy_time_ms(rep.bytes_moved, device, o);
  }
  const std::vector<bool> held = held_across_calls(model.graph);
  std::vector<std::string> names = {"eager"};
  for (const std::string& b : o.backends)
    if (b != "eager") names.push_back(b);
  for (const std::string& name : names) {
    std::unique_ptr<Backend> backend = make_backend(name);
    GBC_INTERNAL_ASSERT(backend != nullptr, "unvalidated backend " + name);
    backend->prepare(model.graph, o.backend_options);
    BenchResult r = measure(*backend, name, tc, held, o);
    if (name != "eager") r.min_speedup = model.check.expect.for_backend(name).min_speedup;
    rep.results.push_back(std::move(r));
  }
  const double eager_ms = rep.results.front().median_ms, eager_reused_ms = rep.results.front().reused_median_ms;
  rep.outputs_reused = eager_reused_ms > 0;
  for (BenchResult& r : rep.results) {
    r.speedup = r.error.empty() && r.median_ms > 0 ? eager_ms / r.median_ms : 0.0;
    r.reused_speedup = r.error.empty() && r.reused_median_ms > 0 ? eager_reused_ms / r.reused_median_ms : 0.0;
  }
  return rep;
}

}  // namespace gbc
