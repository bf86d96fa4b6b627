// `gbcheck bench`'s measurements: each backend runs one case's inputs (case 0 by default: every
// dim at its maximum) a few times to warm up (compiles, recompiles, caches), then `repeat` timed
// runs whose median is the result; inputs are fresh copies for every call, params the model never
// writes into are the same tensors on every call, as a module's parameters are; eager LibTorch is always measured first as the baseline. A
// backend's compile time is reported apart (BackendStats::compile_ms), never mixed into run times.
// With `profile`, gbc's backends then run `repeat` more times with a Profiler attached and report
// per-step times (profile.h). On the CPU every backend also runs with outputs reused
// (reused_allocations.h), timed apart. check.expect.min_speedup (on the plain times) (per backend or general) turns a slower
// compiled path into a failure that names the numbers; with `fullgraph` so does a graph break.
// Test: tests/cli/bench_command_test.cpp.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compiler/backends/backend.h"
#include "compiler/runtime/profile.h"
#include "harness/model/model.h"

namespace gbc {

struct BenchOptions {
  std::vector<std::string> backends;  // compared with eager (which is measured whether named or not)
  int warmup = 3;
  int repeat = 10;
  int case_index = 0;
  bool profile = false;
  bool fullgraph = false;  // a graph break fails the bench, as it fails a check
  // Time by the process's CPU time (user + sys of every thread) instead of the wall clock: on a
  // shared machine a run's wall time grows with the other processes' load, its CPU time much less.
  // One-thread comparisons only (GBCHECK_THREADS=1): with more threads CPU time is not latency.
  // The CPU only: GPU work runs asynchronously.
  bool cpu_clock = false;
  BackendOptions backend_options;
};

struct BenchResult {
  std::string backend;
  std::vector<double> run_ms;  // the timed runs, in order
  double median_ms = 0.0;
  double min_ms = 0.0;
  double first_call_ms = 0.0;  // the first warm-up call: compiling included
  double speedup = 0.0;        // eager's median over this one's
  // On the CPU, the same calls again with outputs reused (ReusedAllocations: every allocation
  // served from memory already mapped), after as many warm-up calls: the kernels' own time.
  std::vector<double> reused_run_ms;
  double reused_median_ms = 0.0;
  double reused_speedup = 0.0;  // eager's reused median over this one's
  BackendStats stats;
  std::vector<ProfileRow> profile;  // with BenchOptions::profile, for gbc's backends
  double profiled_ms = 0.0;         // wall time of the profiled runs (the % column's base)
  std::string error;                // the backend raised; no times
  std::optional<double> min_speedup;
  bool below_min_speedup() const { return error.empty() && min_speedup && speedup < *min_speedup; }
};

struct BenchReport {
  std::string model_name, model_path, device, torch_version, gbcheck_version;
  int case_index = 0;
  DimBindings dims;
  int warmup = 0, repeat = 0;
  bool cpu_clock = false;  // every time (the copy's too) is the process's CPU time, not wall time
  bool fullgraph = false;
  std::string injected_fault;  // --inject-fault: the times are of a deliberately broken gbc
  int eager_threads = 1;   // ATen's intra-op threads
  int kernel_threads = 1;  // the budget gbc passes its kernels ($GBCHECK_THREADS or every core)
  std::vector<BenchResult> results;  // eager first
  bool outputs_reused = false;        // the reused_* times were measured (the CPU only)
  // The bytes every implementation must move at least (each input read once, each output written
  // once), and a device copy of as many bytes (half read, half written) timed like the backends:
  // the memory-bound ceiling that achieved GB/s is read against.
  int64_t bytes_moved = 0;
  double copy_ms = 0.0;
  double gbs(double ms) const { return ms > 0 ? static_cast<double>(bytes_moved) / (ms * 1e6) : 0.0; }
  double copy_gbs() const { return gbs(copy_ms); }
  /// The time achieved GB/s is computed from: outputs reused where measured (the copy's target is
  /// mapped too), else the plain median.
  double traffic_ms(const BenchResult& r) const { return outputs_reused ? r.reused_median_ms : r.median_ms; }

  /// One line per failed expectation or error ("gbc: 1.20x is below check.expect.min_speedup 3").
  std::vector<std::string> failures() const;
  int exit_code() const;
};

/// "2.50x"; below 0.1 with three significant digits ("0.00123x"), never a bare "0.00x".
std::string format_speedup(double speedup);

/// Raises ModelError when the eager reference itself fails on the case.
BenchReport run_bench(const Model& model, const BenchOptions& options);

}  // namespace gbc
