// gbc's kernels on a GPU (label cuda): every corpus example passes gbc against eager with device
// cuda, its fused kernels compiled by NVRTC and launched through the driver API (no FB001/FB004);
// gbc-cudagraphs captures a static model once, replays it on new values, guards its inputs and
// leaves graphs it cannot capture to plain gbc. Tests that need a GPU skip with a message when
// there is none; the CPU refusal of gbc-cudagraphs is checked everywhere.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/aten/eager_executor.h"
#include "compiler/backends/gbc_cudagraphs_backend.h"
#include "compiler/cuda/cuda_driver.h"
#include "harness/model/model_loader.h"
#include "harness/runner/check_runner.h"
#include "tests/support/load_model.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

// Empty when this machine can run CUDA kernels, otherwise why not.
std::string no_gpu_reason() {
  if (!at::hasCUDA()) return "this LibTorch has no usable CUDA device";
  if (!CudaDriver::get().available()) return CudaDriver::get().unavailable_reason();
  return "";
}

#define SKIP_WITHOUT_GPU()                                                                 \
  do {                                                                                     \
    if (std::string why = no_gpu_reason(); !why.empty()) GTEST_SKIP() << "no GPU: " << why; \
  } while (0)

std::vector<std::string> examples() {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(fs::path(GBCHECK_SOURCE_DIR) / "corpus/examples"))
    if (entry.path().extension() == ".yaml") out.push_back(entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.size() - 5);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

std::string failures(const CheckReport& report) {
  std::string out = report.eager_error.empty() ? "" : "eager failed: " + report.eager_error + "\n";
  for (const BackendReport& b : report.backends) {
    for (const std::string& e : b.expectation_failures) out += b.backend + ": expectation: " + e + "\n";
    for (const CaseFailure& f : b.failures) {
      out += b.backend + ": case " + std::to_string(f.index) + ":";
      for (const std::string& o : f.failed_oracles()) out += " " + o;
      out += f.error.empty() ? "\n" : " raised: " + f.error + "\n";
    }
    for (const CompileEvent& e : b.stats.events) out += b.backend + ": event " + e.code + ": " + e.message + "\n";
  }
  return out;
}

std::string failures_of(const BackendStats& stats) {
  std::string out;
  for (const CompileEvent& e : stats.events) out += e.code + ": " + e.message + "\n";
  return out;
}

bool has_event(const BackendStats& stats, const std::string& code) {
  return std::any_of(stats.events.begin(), stats.events.end(), [&](const CompileEvent& e) { return e.code == code; });
}

class GbcCudaCorpus : public ::testing::TestWithParam<std::string> {};

TEST_P(GbcCudaCorpus, GbcMatchesEagerOnDeviceCuda) {
  SKIP_WITHOUT_GPU();
  Model model = load_model_file(fs::path(GBCHECK_SOURCE_DIR) / "corpus/examples" / GetParam());
  RunOptions opt = run_options_from_model(model);
  opt.backends = {"gbc"};
  opt.backend_options.device = "cuda";
  opt.cases = std::min(opt.cases, 5);
  const CheckReport report = run_check(model, opt);
  EXPECT_TRUE(report.pass()) << failures(report);
  ASSERT_EQ(report.backends.size(), 1u);
  const BackendStats& stats = report.backends[0].stats;
  EXPECT_FALSE(has_event(stats, "FB001")) << "a CUDA module failed to compile or load:\n" << failures(report);
  EXPECT_FALSE(has_event(stats, "FB004")) << "the CUDA runner is not wired:\n" << failures(report);
}

INSTANTIATE_TEST_SUITE_P(Examples, GbcCudaCorpus, ::testing::ValuesIn(examples()), test_name);

using testing::load;

const char* kStaticChain = R"(format: gbcheck/v1
name: static_chain
dims: {N: 8, C: 300}
inputs:
  x: {shape: [N, C], dtype: float32}
  y: {shape: [C], dtype: float32}
graph:
  - {id: a, op: mul, args: [x, 1.5]}
  - {id: b, op: add, args: [a, y]}
  - {id: c, op: tanh, args: [b]}
  - {id: m, op: amax, args: [c], dim: -1, keepdim: true}
  - {id: d, op: sub, args: [c, m]}
  - {id: e, op: exp, args: [d]}
outputs: [e, m]
)";

std::vector<at::Tensor> on_gpu(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  for (const at::Tensor& t : ts) out.push_back(t.to(at::kCUDA));
  return out;
}

void expect_close(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(got[i].is_cuda()) << what << ", output " << i;
    EXPECT_TRUE(at::allclose(got[i].cpu(), want[i].cpu(), 1.3e-6, 1e-5)) << what << ", output " << i;
  }
}

TEST(GbcCudaGraphs, CapturesOnceAndReplaysNewValues) {
  SKIP_WITHOUT_GPU();
  Model model = load(kStaticChain);
  BackendOptions bo;
  bo.device = "cuda";
  std::unique_ptr<Backend> backend = make_gbc_cudagraphs_backend();
  backend->prepare(model.graph, bo);
  std::vector<at::Tensor> kept;
  for (int call = 0; call < 3; ++call) {
    std::vector<at::Tensor> inputs = on_gpu({at::randn({8, 300}), at::randn({300})});
    std::vector<at::Tensor> want = run_eager(model.graph, inputs);
    std::vector<at::Tensor> got = backend->run(inputs);
    expect_close(got, want, "call " + std::to_string(call));
    if (call == 0) kept = {got[0], want[0]};
  }
  // Outputs are the caller's: later replays do not write into them.
  EXPECT_TRUE(at::allclose(kept[0].cpu(), kept[1].cpu(), 1.3e-6, 1e-5));
  const BackendStats& stats = backend->stats();
  EXPECT_GT(stats.fusion_groups, 0);
  EXPECT_EQ(stats.fallbacks, 0) << "the static chain must be captured: " << (stats.events.empty() ? "" : stats.events[0].message);
}

// Each input signature gets its own captured graph, as torch.compile's cudagraph trees record one
// per shape, up to cache_size_limit; past it, new signatures run as plain gbc and FB006 says so once.
TEST(GbcCudaGraphs, EachInputSignatureIsCapturedUpToTheLimit) {
  SKIP_WITHOUT_GPU();
  Model model = load(R"(format: gbcheck/v1
name: dynamic_chain
dims: {N: [1, 64]}
inputs:
  x: {shape: [N], dtype: float32}
graph:
  - {id: a, op: mul, args: [x, 2.0]}
  - {id: b, op: sigmoid, args: [a]}
outputs: [b]
)");
  BackendOptions bo;
  bo.device = "cuda";
  bo.cache_size_limit = 2;
  std::unique_ptr<Backend> backend = make_gbc_cudagraphs_backend();
  backend->prepare(model.graph, bo);
  for (int64_t n : {16, 16, 40, 16, 40}) {
    std::vector<at::Tensor> inputs = on_gpu({at::randn({n})});
    expect_close(backend->run(inputs), run_eager(model.graph, inputs), "N = " + std::to_string(n));
  }
  EXPECT_FALSE(has_event(backend->stats(), "FB006")) << "two signatures fit a limit of two";
  for (int64_t n : {50, 51, 16}) {
    std::vector<at::Tensor> inputs = on_gpu({at::randn({n})});
    expect_close(backend->run(inputs), run_eager(model.graph, inputs), "N = " + std::to_string(n));
  }
  const BackendStats& stats = backend->stats();
  EXPECT_EQ(std::count_if(stats.events.begin(), stats.events.end(), [](const CompileEvent& e) { return e.code == "FB006"; }), 1)
      << "reported once, for the first signature past the limit";
}

// Views (a transpose on ATen) launch nothing: the graph around them is still captured.
TEST(GbcCudaGraphs, ViewStepsDoNotPreventACapture) {
  SKIP_WITHOUT_GPU();
  Model model = load(R"(format: gbcheck/v1
name: transposed
dims: {M: 8, N: 300}
inputs:
  x: {shape: [M, N], dtype: float32}
graph:
  - {id: t, op: transpose, args: [x], dim0: 0, dim1: 1}
  - {id: e, op: exp, args: [t]}
  - {id: s, op: sum, args: [e], dim: [1]}
outputs: [e, s]
)");
  BackendOptions bo;
  bo.device = "cuda";
  std::unique_ptr<Backend> backend = make_gbc_cudagraphs_backend();
  backend->prepare(model.graph, bo);
  for (int call = 0; call < 3; ++call) {
    std::vector<at::Tensor> inputs = on_gpu({at::randn({8, 300})});
    expect_close(backend->run(inputs), run_eager(model.graph, inputs), "call " + std::to_string(call));
  }
  EXPECT_FALSE(has_event(backend->stats(), "FB005")) << failures_of(backend->stats());
}

TEST(GbcCudaGraphs, GraphsWithAtenStepsRunAsGbcAndSaySo) {
  SKIP_WITHOUT_GPU();
  Model model = load(R"(format: gbcheck/v1
name: matmul_gelu
dims: {M: 16, K: 32, N: 8}
inputs:
  x: {shape: [M, K], dtype: float32}
  w: {shape: [K, N], dtype: float32}
graph:
  - {id: y, op: matmul, args: [x, w]}
  - {id: z, op: gelu, args: [y]}
outputs: [z]
)");
  BackendOptions bo;
  bo.device = "cuda";
  std::unique_ptr<Backend> backend = make_gbc_cudagraphs_backend();
  backend->prepare(model.graph, bo);
  for (int call = 0; call < 2; ++call) {
    std::vector<at::Tensor> inputs = on_gpu({at::randn({16, 32}), at::randn({32, 8})});
    std::vector<at::Tensor> got = backend->run(inputs);
    std::vector<at::Tensor> want = run_eager(model.graph, inputs);
    ASSERT_EQ(got.size(), 1u);
    // TF32 may be on for the matmul on either side: compare loosely.
    EXPECT_TRUE(at::allclose(got[0].cpu(), want[0].cpu(), 1e-2, 1e-2));
  }
  EXPECT_TRUE(has_event(backend->stats(), "FB005"));
}

// A call writes the caller's state (training batch_norm's running stats) whether its signature is
// captured or runs as plain gbc: the first call ran on static copies and the stats never moved.
TEST(GbcCudaGraphs, RunningStatsReachTheCallersTensors) {
  SKIP_WITHOUT_GPU();
  Model model = load(R"(format: gbcheck/v1
name: batch_norm_train
dims: {N: 4, C: 8, H: 6, W: 6}
inputs:
  x: {shape: [N, C, H, W], dtype: float32}
params:
  gamma: {shape: [C], dtype: float32}
  beta: {shape: [C], dtype: float32}
  mean: {shape: [C], dtype: float32}
  var: {shape: [C], dtype: float32}
graph:
  - {id: bn, op: batch_norm, args: [x, gamma, beta, mean, var], training: true, momentum: 0.1, eps: 1.0e-5}
  - {id: y, op: relu, args: [bn]}
outputs: [y]
)");
  BackendOptions bo;
  bo.device = "cuda";
  std::unique_ptr<Backend> backend = make_gbc_cudagraphs_backend();
  backend->prepare(model.graph, bo);
  std::vector<at::Tensor> state = on_gpu({at::rand({8}) * 0.2 - 0.1, at::rand({8}) + 0.5});
  std::vector<at::Tensor> eager_state = {state[0].clone(), state[1].clone()};
  const std::vector<at::Tensor> affine = on_gpu({at::rand({8}) + 0.5, at::rand({8}) * 0.2 - 0.1});
  for (int call = 0; call < 3; ++call) {
    const at::Tensor x = at::randn({4, 8, 6, 6}).to(at::kCUDA);
    std::vector<at::Tensor> want = run_eager(model.graph, {x, affine[0], affine[1], eager_state[0], eager_state[1]});
    std::vector<at::Tensor> got = backend->run({x, affine[0], affine[1], state[0], state[1]});
    expect_close(got, want, "call " + std::to_string(call));
    expect_close(state, eager_state, "running stats after call " + std::to_string(call));
  }
}

TEST(GbcCudaGraphs, RefusesTheCpuWithAClearError) {
  Model model = load(kStaticChain);
  BackendOptions bo;
  bo.device = "cpu";
  std::unique_ptr<Backend> backend = make_gbc_cudagraphs_backend();
  backend->prepare(model.graph, bo);
  try {
    backend->run({at::randn({8, 300}), at::randn({300})});
    FAIL() << "gbc-cudagraphs ran on the CPU";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("needs device cuda"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gbc
