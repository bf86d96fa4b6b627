// Every corpus model's CUDA kernels compile, checked on the CPU. Each model (corpus/examples,
// corpus/faults, bench/models with smaller dims) runs through gbc's runtime exactly as on
// device cuda up to the launch: the same capture, plan (Target::Cuda), layout specialization and
// compile-before-launch path (kernel_region.h, predicted_layouts.h), with a module compiler that
// generates the CUDA source, compiles it with NVRTC to PTX for sm_80 and sm_90, and hands back
// launchers that run the kernels in the interpreter on the CPU tensors. Reduction variants hold one
// row class each, as the CUDA runner's refine_variant sets it (cuda_refine_variant, for 132
// multiprocessors), and every launch checks that its call is of the variant's class. The test
// fails on any NVRTC error, on a kernel that ran without being compiled first, on a launch of the
// wrong class, and on a check failure (the model's own oracles against eager). Skips when NVRTC is
// absent.
#include <ATen/ops/allclose.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/codegen/cuda_codegen.h"
#include "compiler/cuda/nvrtc_compiler.h"
#include "compiler/cuda/cuda_driver.h"
#include "compiler/kernel/interpreter.h"
#include "compiler/runtime/cuda_kernel_runner.h"
#include "compiler/runtime/graph_runtime.h"
#include "compiler/runtime/kernel_region.h"
#include "harness/model/model_loader.h"
#include "harness/runner/check_runner.h"
#include "tests/support/cuda_plan_on_cpu.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

// What the CUDA module compiler saw, across a model's run.
struct CompileLog {
  int modules = 0;
  int kernels = 0;
  int launches = 0;
  std::vector<std::string> errors;  // "graph0_m0 sm_80: gbc_kernels.cu(123): error: ..."
};

std::string first_error(const std::string& log) {
  size_t at = log.find("error");
  if (at == std::string::npos) return log.substr(0, log.find('\n'));
  size_t start = log.rfind('\n', at);
  start = start == std::string::npos ? 0 : start + 1;
  return log.substr(start, log.find('\n', at) - start);
}

// The multiprocessors of the device the row classes are chosen for (an H100 SXM's).
constexpr int kMultiprocessors = 132;

// Compiles for sm_80 and sm_90 what the CUDA runner would compile for the device, then runs the
// kernels in the interpreter: the data is on the CPU.
NativeModule compile_for_both_archs(const std::vector<kir::Kernel>& kernels, const std::string& module, CompileLog& log) {
  ++log.modules;
  log.kernels += static_cast<int>(kernels.size());
  const std::string source = codegen::generate_cuda_source(kernels, module);
  for (int arch : {80, 90}) {
    codegen::CudaPtx ptx = codegen::compile_cuda_ptx(source, arch);
    if (!ptx.build.ok) {
      log.errors.push_back(module + " sm_" + std::to_string(arch) + ": " + first_error(ptx.build.log));
      continue;
    }
    for (const kir::Kernel& k : kernels)
      if (ptx.build.binary.find(".entry " + k.name + "(") == std::string::npos)
        log.errors.push_back(module + " sm_" + std::to_string(arch) + ": no entry point " + k.name + " in the PTX");
  }
  NativeModule m;
  m.ok = true;
  for (const kir::Kernel& k : kernels)
    m.functions.push_back([k, &log](const GbcKernelArgs* args) {
      ++log.launches;
      // The CUDA launcher's check (cuda_kernel_runner.cpp), on the CPU tensors' pointers.
      const kir::CudaRows call =
          codegen::cuda_call_row_class(k, codegen::cuda_row_layout(k), codegen::make_cuda_args(k, *args), kMultiprocessors);
      if (k.cuda_rows != kir::CudaRows::All && call != k.cuda_rows)
        log.errors.push_back(k.name + " holds " + kir::cuda_rows_name(k.cuda_rows) + " rows, launched for " +
                             kir::cuda_rows_name(call));
      interpret_kernel(k, *args);
    });
  return m;
}

// gbc's region compiler for device cuda, on CPU tensors: the plan and the kernel region options
// are the CUDA runner's (cuda_kernel_runner.cpp), only the module compiler differs.
std::unique_ptr<RegionCompiler> cuda_plan_on_cpu(CompileLog& log) {
  return std::make_unique<testing::CudaPlanOnCpu>([&log](const CompileContext&) {
    KernelRegionOptions o;
    o.native = [&log](const std::vector<kir::Kernel>& kernels, const std::string& module) {
      return compile_for_both_archs(kernels, module, log);
    };
    o.refine_variant = cuda_refine_variant(kMultiprocessors);
    return o;
  });
}

// gbc's region compiler for device cuda with the CUDA runner itself, on CPU tensors: only usable
// where the driver is missing, so that no module loads and every kernel falls back.
std::unique_ptr<RegionCompiler> cuda_runner_on_cpu() {
  return std::make_unique<testing::CudaPlanOnCpu>(cuda_kernel_region_options);
}

std::vector<std::string> corpus_models() {
  std::vector<std::string> out;
  for (const char* dir : {"corpus/examples", "corpus/faults", "bench/models"}) {
    const fs::path path = fs::path(GBCHECK_SOURCE_DIR) / dir;
    if (!fs::is_directory(path)) continue;
    for (const auto& entry : fs::directory_iterator(path))
      if (entry.path().extension() == ".yaml") out.push_back(std::string(dir) + "/" + entry.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.size() - 5);  // without ".yaml"
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// Benchmark shapes are far too big for the interpreter, and the kernels' code does not depend on
// the sizes: rows shrink to 4 and innermost dims (which attributes such as layer_norm's
// normalized_shape may spell out) to at most 4096 when nothing else names them.
void shrink_dims(Model& model) {
  std::set<std::string> innermost;
  for (const TensorSpec* spec : model.all_tensor_specs())
    if (!spec->shape.empty()) spec->shape.back().collect_symbols(innermost);
  for (const auto& [name, range] : std::map<std::string, DimRange>(model.graph.dims.ranges())) {
    const int64_t limit = innermost.count(name) ? 4096 : 4;
    if (range.min > limit) model.graph.dims.declare(name, DimRange{limit, limit});
  }
}

std::string describe_failures(const CheckReport& report) {
  std::string out = report.eager_error.empty() ? "" : "eager failed: " + report.eager_error + "\n";
  for (const BackendReport& b : report.backends) {
    for (const std::string& e : b.expectation_failures) out += "expectation: " + e + "\n";
    for (const CaseFailure& f : b.failures) {
      out += "case " + std::to_string(f.index) + ":";
      for (const std::string& o : f.failed_oracles()) out += " " + o;
      out += f.error.empty() ? "\n" : " raised: " + f.error + "\n";
      for (const OutputCheck& o : f.outputs) out += "  " + o.output + ": " + o.detail + "\n";
    }
  }
  return out;
}

class CudaCorpusTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaCorpusTest, KernelsCompileForSm80AndSm90BeforeTheirFirstLaunch) {
  if (!NvrtcCompiler::get().available()) GTEST_SKIP() << "NVRTC not present: " << NvrtcCompiler::get().unavailable_reason();
  Model model = load_model_file(fs::path(GBCHECK_SOURCE_DIR) / GetParam());
  if (GetParam().rfind("bench/", 0) == 0) shrink_dims(model);

  CompileLog log;
  RunOptions opt = run_options_from_model(model);
  opt.backend_options.device = "cpu";
  opt.cases = std::min(opt.cases, 3);
  opt.max_shrink_tries = 0;
  opt.backends = {"gbc-cuda-plan"};
  opt.extra_backends.push_back({"gbc-cuda-plan", "gbc's CUDA plan and compile path, kernels interpreted on the CPU",
                                [&log] { return std::make_unique<GraphRuntime>("gbc-cuda-plan", cuda_plan_on_cpu(log)); }});
  const CheckReport report = run_check(model, opt);

  for (const std::string& e : log.errors) ADD_FAILURE() << GetParam() << ": " << e;
  EXPECT_TRUE(report.pass()) << GetParam() << ":\n" << describe_failures(report);
  ASSERT_EQ(report.backends.size(), 1u);
  if (report.backends[0].stats.fusion_groups > 0) {
    EXPECT_GT(log.modules, 0) << "kernels were formed but nothing was compiled";
    EXPECT_GT(log.launches, 0) << "no kernel ran as compiled code";
  }
  for (const CompileEvent& e : report.backends[0].stats.events)
    EXPECT_NE(e.code, "FB004") << "the CUDA plan must not need a kernel runner for the device: " << e.message;
  std::cout << GetParam() << ": " << log.modules << " module(s), " << log.kernels << " kernel variant(s), "
            << log.launches << " launch(es)\n";
}

INSTANTIATE_TEST_SUITE_P(Corpus, CudaCorpusTest, ::testing::ValuesIn(corpus_models()), test_name);

// A graph whose kernels read only region inputs and each other's outputs is compiled in one module
// before it runs: the predicted layouts cover every kernel.
TEST(CudaCorpus, OneModulePerVariantSetWhenEveryLayoutIsPredictable) {
  if (!NvrtcCompiler::get().available()) GTEST_SKIP() << "NVRTC not present: " << NvrtcCompiler::get().unavailable_reason();
  const std::string text = R"(format: gbcheck/v1
name: two_kernels
dims: {N: 8, C: 16}
inputs:
  x: {shape: [N, C], dtype: float32}
graph:
  - {id: s, op: sum, args: [x], dim: -1, keepdim: true}
  - {id: y, op: sub, args: [x, s]}
  - {id: z, op: exp, args: [y]}
  - {id: t, op: sum, args: [z], dim: 0}
outputs: [t]
)";
  Model model = load_model_text(text, "two_kernels.yaml");
  CompileLog log;
  BackendOptions bo;
  GraphRuntime runtime("gbc-cuda-plan", cuda_plan_on_cpu(log));
  runtime.prepare(model.graph, bo);
  at::Tensor x = at::randn({8, 16});
  runtime.run({x});
  ASSERT_TRUE(log.errors.empty()) << log.errors.front();
  EXPECT_GE(runtime.stats().fusion_groups, 2) << "the test needs a graph of several kernels";
  EXPECT_EQ(log.modules, 1) << "every kernel's variant goes into the first call's one module";
  runtime.run({x});
  EXPECT_EQ(log.modules, 1) << "a call with the same layouts compiles nothing";
  runtime.run({x.t().contiguous().t()});
  EXPECT_EQ(log.modules, 2) << "new input strides: the new variants compile in one more module";
}

// A module the CUDA runner cannot build or load is an FB001 fallback that says why; the kernels'
// nodes then run on ATen and the results stay right.
TEST(CudaCorpus, AModuleThatCannotBeLoadedIsAFallbackNeverSilent) {
  if (CudaDriver::get().available()) GTEST_SKIP() << "needs a machine without a CUDA driver (the modules would load)";
  Model model = load_model_text(R"(format: gbcheck/v1
name: chain
dims: {N: 16}
inputs:
  x: {shape: [N], dtype: float32}
graph:
  - {id: a, op: mul, args: [x, 3.0]}
  - {id: b, op: tanh, args: [a]}
outputs: [b]
)",
                                "chain.yaml");
  GraphRuntime runtime("gbc-cuda-runner", cuda_runner_on_cpu());
  runtime.prepare(model.graph, BackendOptions{});
  at::Tensor x = at::randn({16});
  std::vector<at::Tensor> out = runtime.run({x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(at::allclose(out[0], x.mul(3.0).tanh()));
  const BackendStats& stats = runtime.stats();
  ASSERT_EQ(stats.fallbacks, 1);
  const CompileEvent& e = stats.events.front();
  EXPECT_EQ(e.code, "FB001");
  EXPECT_NE(e.message.find("the CUDA driver is unavailable"), std::string::npos) << e.message;
  EXPECT_NE(e.hint.find("NVRTC"), std::string::npos) << e.hint;
}

}  // namespace
}  // namespace gbc
