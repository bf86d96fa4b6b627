// Issue 19's Halide reference: hand-scheduled Halide 14 pipelines (JIT, one thread, outputs
// reused) for the five CPU workloads gbc is measured against, timed in one process with eager
// ATen (one thread, fresh outputs as eager allocates them) and a memcpy of as many bytes into a
// touched buffer; prints a table of medians and each pipeline's largest difference from eager.
//
//   build/bin/halide_bench [--repeat N] [--clock wall|cpu] [--gbc MODELS_DIR]
//   (docs/performance.md, "The Halide reference")
//
// --clock cpu times by the process's CPU time, as `gbcheck bench --clock cpu` does: steadier than
// wall time on a loaded machine, and a fair measure here since everything runs on one thread.
// --gbc DIR (bench/models) also times gbc on each workload's bench model in this process, right
// after Halide (`gbcheck bench`'s measurement, outputs reused; run with GBCHECK_THREADS=1): two
// processes' times on a shared machine drift apart by more than the gaps measured.
//
// The schedules do what issue 19 found makes Halide fast: every row reduction split across 16
// vector lanes (rfactor) and finished once per row, the row kept in a small scratch buffer between
// the reduction and the store pass, tanh from the vectorized exp (Halide's tanh is libm's, per
// lane), several outputs written in one loop (a Tuple). Built only where Halide 14 is installed
// (bench/halide/CMakeLists.txt). No test runs it: it is a measurement, not a check; its results are
// compared with eager's on every run.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <Halide.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "harness/bench/bench_runner.h"
#include "harness/model/model_loader.h"

namespace {

using namespace Halide;
using Clock = std::chrono::steady_clock;

bool cpu_clock = false;  // --clock cpu

double now_ms() {
  if (!cpu_clock) return std::chrono::duration<double, std::milli>(Clock::now().time_since_epoch()).count();
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double median_ms(const std::function<void()>& run, int repeat) {
  for (int i = 0; i < 2; ++i) run();  // warm-up: JIT compile, first touch
  std::vector<double> times;
  for (int i = 0; i < repeat; ++i) {
    const double start = now_ms();
    run();
    times.push_back(now_ms() - start);
  }
  std::sort(times.begin(), times.end());
  return times.size() % 2 ? times[times.size() / 2] : 0.5 * (times[times.size() / 2 - 1] + times[times.size() / 2]);
}

// A Halide buffer over a contiguous tensor's memory; Halide's dim 0 is the innermost.
template <typename T>
Buffer<T> view(const at::Tensor& t) {
  std::vector<int> sizes;
  for (int64_t d = t.dim() - 1; d >= 0; --d) sizes.push_back(static_cast<int>(t.size(d)));
  return Buffer<T>(static_cast<T*>(t.data_ptr()), sizes);
}

// tanh from the vectorized exp: 1 - 2 / (exp(2x) + 1) (exp's overflow to inf gives 1).
Expr tanh_from_exp(const Expr& x) { return 1.0f - 2.0f / (exp(2.0f * x) + 1.0f); }

// A sum (or max) over dim 0 of `value(k)` per row, split across 16 vector lanes and folded once.
void lanes_schedule(Func reduction, const RVar& k, Func consumer, const Var& row) {
  RVar ko("ko"), ki("ki");
  Var lane("lane");
  Func partial = reduction.update().split(k, ko, ki, 16, TailStrategy::GuardWithIf).rfactor(ki, lane);
  reduction.compute_at(consumer, row);
  partial.compute_at(consumer, row).vectorize(lane);
  partial.update().vectorize(lane);
}

struct Workload {
  std::string name;
  int64_t bytes = 0;                    // inputs read once + outputs written once
  std::function<void()> eager, halide;  // halide writes into outputs allocated once
  std::function<double()> max_diff;     // of the last Halide outputs from eager's
};

Workload named(std::string name, int64_t bytes) {
  Workload w;
  w.name = std::move(name);
  w.bytes = bytes;
  return w;
}

double max_abs_diff(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor finite = at::isfinite(a) & at::isfinite(b);
  const at::Tensor same_special = (a == b) | (at::isnan(a) & at::isnan(b));
  if (!(finite | same_special).all().item<bool>()) return INFINITY;
  return (a - b).abs().masked_fill(~finite, 0).max().item<double>();
}

int64_t nbytes(std::initializer_list<at::Tensor> ts) {
  int64_t n = 0;
  for (const at::Tensor& t : ts) n += static_cast<int64_t>(t.nbytes());
  return n;
}

Workload chain(const Target& target) {
  const int64_t n = 16 << 20;
  at::Tensor x = at::randn({n}), y = at::randn({n}), out = at::zeros({n});
  ImageParam px(Float(32), 1, "x"), py(Float(32), 1, "y");
  Var i("i");
  Func f("chain");
  Expr a = px(i) * 1.5f + py(i);
  Expr t = tanh_from_exp(a);
  Expr s = 1.0f / (1.0f + exp(-t));
  f(i) = sqrt(abs(s * px(i) - 0.25f));
  f.vectorize(i, 16);
  auto pipeline = std::make_shared<Pipeline>(f);
  pipeline->compile_jit(target);
  auto eager = [x, y] { return at::sqrt(at::abs(at::sigmoid(at::tanh(x * 1.5 + y)) * x - 0.25)); };
  Workload w = named("8-op chain, 16M f32 (x*1.5+y, tanh, sigmoid, *x, -0.25, abs, sqrt)", nbytes({x, y, out}));
  w.eager = [eager] { (void)eager(); };
  w.halide = [=]() mutable {
    px.set(view<float>(x));
    py.set(view<float>(y));
    Buffer<float> o = view<float>(out);
    pipeline->realize(o);
  };
  w.max_diff = [=] { return max_abs_diff(out, eager()); };
  return w;
}

// exp(s - the row's max), kept in a row scratch buffer, and 1 / the row's sum of it, both
// scheduled per row of `consumer`.
struct RowSoftmax {
  Func e, inv_sum;
};
RowSoftmax row_softmax(Func s, int cols, Func consumer, const Var& c, const Var& r) {
  RDom k(0, cols);
  Func mx("mx"), sum("sum");
  RowSoftmax out{Func("e"), Func("inv_sum")};
  mx(r) = Float(32).min();
  mx(r) = max(mx(r), s(k, r));
  out.e(c, r) = exp(s(c, r) - mx(r));
  sum(r) = 0.0f;
  sum(r) += out.e(k, r);
  out.inv_sum(r) = 1.0f / sum(r);
  out.e.compute_at(consumer, r).vectorize(c, 16);
  out.inv_sum.compute_at(consumer, r);
  lanes_schedule(mx, k.x, consumer, r);
  lanes_schedule(sum, k.x, consumer, r);
  return out;
}

// A workload of one [4096, 4096] float32 input x and one output of its shape: `define` builds the
// pipeline's Func from x, `eager` computes the same with ATen.
Workload square_workload(const std::string& name, const Target& target,
                         const std::function<Func(ImageParam&)>& define,
                         const std::function<at::Tensor(const at::Tensor&)>& eager) {
  at::Tensor x = at::randn({4096, 4096}), out = at::zeros({4096, 4096});
  ImageParam px(Float(32), 2, "x");
  auto pipeline = std::make_shared<Pipeline>(define(px));
  pipeline->compile_jit(target);
  Workload w = named(name, nbytes({x, out}));
  w.eager = [x, eager] { (void)eager(x); };
  w.halide = [=]() mutable {
    px.set(view<float>(x));
    Buffer<float> o = view<float>(out);
    pipeline->realize(o);
  };
  w.max_diff = [=] { return max_abs_diff(out, eager(x)); };
  return w;
}

Workload softmax(const Target& target) {
  auto define = [](ImageParam& px) {
    Var c("c"), r("r");
    Func scores("scores"), f("softmax");
    scores(c, r) = px(c, r);
    RowSoftmax sm = row_softmax(scores, 4096, f, c, r);
    f(c, r) = sm.e(c, r) * sm.inv_sum(r);
    f.vectorize(c, 16);
    return f;
  };
  return square_workload("softmax [4096, 4096]", target, define, [](const at::Tensor& x) { return at::softmax(x, -1); });
}

// Row mean and 1/sqrt(var + eps) of `row(c, r)` over C columns (two passes over the kept row),
// scheduled per row of `consumer`.
struct RowStats {
  Func mean, inv_std;
};
RowStats row_stats(Func row, int cols, Func consumer, const Var& r, const std::string& prefix) {
  RDom k(0, cols);
  Func sum(prefix + "_sum"), sq(prefix + "_sq");
  RowStats s{Func(prefix + "_mean"), Func(prefix + "_inv_std")};
  sum(r) = 0.0f;
  sum(r) += row(k, r);
  s.mean(r) = sum(r) / static_cast<float>(cols);
  Expr d = row(k, r) - s.mean(r);
  sq(r) = 0.0f;
  sq(r) += d * d;
  s.inv_std(r) = 1.0f / sqrt(sq(r) / static_cast<float>(cols) + 1e-5f);
  lanes_schedule(sum, k.x, consumer, r);
  lanes_schedule(sq, k.x, consumer, r);
  s.mean.compute_at(consumer, r);
  s.inv_std.compute_at(consumer, r);
  return s;
}

Workload layer_norm(const Target& target) {
  auto define = [](ImageParam& px) {
    Var c("c"), r("r");
    Func row("row"), f("layer_norm");
    row(c, r) = px(c, r);
    RowStats s = row_stats(row, 4096, f, r, "ln");
    f(c, r) = (row(c, r) - s.mean(r)) * s.inv_std(r);
    f.vectorize(c, 16);
    return f;
  };
  return square_workload("layer_norm [4096, 4096], no affine", target, define,
                         [](const at::Tensor& x) { return at::layer_norm(x, {4096}); });
}

Workload masked_scores(const Target& target) {
  const int64_t rows = 2048, cols = 2048;
  at::Tensor x = at::randn({rows, cols}), mask = at::rand({1, cols}) < 0.9;
  at::Tensor p_out = at::zeros({rows, cols}), logp_out = at::zeros({rows, cols});
  ImageParam px(Float(32), 2, "x"), pmask(UInt(8), 2, "mask");
  Var c("c"), r("r");
  Func s("s"), f("p_logp");
  s(c, r) = select(pmask(c, 0) != 0, px(c, r) * 0.125f, -10000.0f);
  RowSoftmax sm = row_softmax(s, static_cast<int>(cols), f, c, r);
  Expr p = sm.e(c, r) * sm.inv_sum(r);
  f(c, r) = Tuple(p, log(p));  // both outputs in one loop
  f.vectorize(c, 16);
  auto pipeline = std::make_shared<Pipeline>(f);
  pipeline->compile_jit(target);
  auto eager = [x, mask] {
    at::Tensor p = at::softmax(at::where(mask, x * 0.125, at::full({1}, -10000.0)), -1);
    return std::make_pair(p, at::log(p));
  };
  Workload w = named("masked scores [2048, 2048] (p and log p in one loop)", nbytes({x, mask, p_out, logp_out}));
  w.eager = [eager] { (void)eager(); };
  w.halide = [=]() mutable {
    px.set(view<float>(x));
    pmask.set(view<uint8_t>(mask));
    Buffer<float> p = view<float>(p_out), logp = view<float>(logp_out);
    Realization outputs(p, logp);
    pipeline->realize(outputs);
  };
  w.max_diff = [=] {
    auto [p, logp] = eager();
    return std::max(max_abs_diff(p_out, p), max_abs_diff(logp_out, logp));
  };
  return w;
}

Workload epilogue(const Target& target) {
  const int64_t rows = 4096, cols = 1024;
  at::Tensor x = at::randn({rows, cols}), residual = at::randn({rows, cols}), out = at::zeros({rows, cols});
  at::Tensor bias = at::rand({cols}) * 0.2 - 0.1, weight = at::rand({cols}) + 0.5, shift = at::rand({cols}) * 0.2 - 0.1;
  ImageParam px(Float(32), 2, "x"), pres(Float(32), 2, "residual");
  ImageParam pbias(Float(32), 1, "bias"), pw(Float(32), 1, "w"), pb(Float(32), 1, "b");
  Var c("c"), r("r");
  Func row("row"), f("epilogue");
  Expr h = px(c, r) + pbias(c);
  Expr g = 0.5f * h * (1.0f + tanh_from_exp(0.7978845608f * (h + 0.044715f * h * h * h)));
  row(c, r) = g + pres(c, r);
  RowStats s = row_stats(row, static_cast<int>(cols), f, r, "ln");
  f(c, r) = (row(c, r) - s.mean(r)) * s.inv_std(r) * pw(c) + pb(c);
  f.vectorize(c, 16);
  row.compute_at(f, r).vectorize(c, 16);  // the row kept between the reductions and the store
  auto pipeline = std::make_shared<Pipeline>(f);
  pipeline->compile_jit(target);
  auto eager = [=] { return at::layer_norm(at::gelu(x + bias, "tanh") + residual, {1024}, weight, shift); };
  Workload w = named("bias + gelu(tanh) + residual + layer_norm with affine, [4096, 1024]",
                     nbytes({x, residual, bias, weight, shift, out}));
  w.eager = [eager] { (void)eager(); };
  w.halide = [=]() mutable {
    px.set(view<float>(x));
    pres.set(view<float>(residual));
    pbias.set(view<float>(bias));
    pw.set(view<float>(weight));
    pb.set(view<float>(shift));
    Buffer<float> o = view<float>(out);
    pipeline->realize(o);
  };
  w.max_diff = [=] { return max_abs_diff(out, eager()); };
  return w;
}

// gbc's kernel time on one bench model (outputs reused), measured as `gbcheck bench --backend gbc`.
double gbc_reused_ms(const std::string& path, int repeat) {
  gbc::BenchOptions options;
  options.backends = {"gbc"};
  options.repeat = repeat;
  options.cpu_clock = cpu_clock;
  const gbc::BenchReport report = gbc::run_bench(gbc::load_model_file(path), options);
  for (const gbc::BenchResult& r : report.results) {
    if (r.backend != "gbc") continue;
    if (!r.error.empty()) throw std::runtime_error(path + ": gbc: " + r.error);
    return r.reused_median_ms;
  }
  throw std::runtime_error(path + ": no gbc result");
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 10;
  std::string gbc_dir;  // --gbc
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--gbc") == 0 && i + 1 < argc) {
      gbc_dir = argv[++i];
    } else if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--clock") == 0 && i + 1 < argc &&
               (std::strcmp(argv[i + 1], "wall") == 0 || std::strcmp(argv[i + 1], "cpu") == 0)) {
      cpu_clock = std::strcmp(argv[++i], "cpu") == 0;
    } else {
      std::fprintf(stderr, "usage: %s [--repeat N] [--clock wall|cpu] [--gbc MODELS_DIR]\n", argv[0]);
      return 2;
    }
  }
  at::set_num_threads(1);
  at::manual_seed(0);
  const Target target = get_jit_target_from_environment();
  std::printf("Halide 14, target %s; LibTorch eager on %d thread, Halide pipelines on one (no parallel loops); "
              "median of %d after 2 warm-up runs%s\n",
              target.to_string().c_str(),
              at::get_num_threads(), repeat, cpu_clock ? ", process CPU time" : "");
  const bool with_gbc = !gbc_dir.empty();
  std::printf("| workload | eager ms | Halide ms | memcpy ms | Halide GB/s | max |Halide - eager| |%s\n"
              "|---|---:|---:|---:|---:|---:|%s\n",
              with_gbc ? " gbc ms, outputs reused | gbc / Halide |" : "", with_gbc ? "---:|---:|" : "");
  // Each workload and its gbc bench model (bench/models).
  const std::vector<std::pair<Workload (*)(const Target&), std::string>> workloads = {
      {chain, "elementwise_chain_16m"},
      {softmax, "softmax_4096"},
      {layer_norm, "layer_norm_no_affine_4096"},
      {masked_scores, "masked_softmax_2048"},
      {epilogue, "bias_gelu_residual_layer_norm_4096x1024"}};
  for (const auto& [make, model] : workloads) {
    Workload w = make(target);
    const double eager_ms = median_ms(w.eager, repeat);
    const double halide_ms = median_ms(w.halide, repeat);
    const double diff = w.max_diff();
    // A copy moving the same bytes (half read, half written) into a buffer touched beforehand.
    std::vector<char> src(static_cast<size_t>(w.bytes / 2), 1), dst(static_cast<size_t>(w.bytes / 2), 0);
    const double copy_ms = median_ms([&] { std::memcpy(dst.data(), src.data(), src.size()); }, repeat);
    std::printf("| %s | %.1f | %.2f | %.2f | %.1f | %.3g |", w.name.c_str(), eager_ms, halide_ms, copy_ms,
                static_cast<double>(w.bytes) / (halide_ms * 1e6), diff);
    if (with_gbc) {
      try {
        const double gbc_ms = gbc_reused_ms(gbc_dir + "/" + model + ".yaml", repeat);
        std::printf(" %.2f | %.2f |", gbc_ms, gbc_ms / halide_ms);
      } catch (const std::exception& e) {
        std::printf(" error | |");
        std::fprintf(stderr, "halide_bench: %s\n", e.what());
      }
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
