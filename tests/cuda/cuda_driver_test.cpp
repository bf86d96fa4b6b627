#include "compiler/cuda/cuda_driver.h"

#include <gtest/gtest.h>

#include <vector>

#include "compiler/cuda/cuda_module.h"
#include "compiler/cuda/nvrtc_compiler.h"
#include "tests/cuda/kernels.h"

namespace gbc {
namespace {

#define SKIP_WITHOUT_GPU()                                                                    \
  if (!CudaDriver::get().available()) {                                                      \
    GTEST_SKIP() << "no CUDA driver/GPU: " << CudaDriver::get().unavailable_reason();        \
  }                                                                                          \
  if (!NvrtcCompiler::get().available()) {                                                   \
    GTEST_SKIP() << "NVRTC not present: " << NvrtcCompiler::get().unavailable_reason();      \
  }

TEST(CudaDriverTest, ReportsDeviceOrReason) {
  CudaDriver& driver = CudaDriver::get();
  if (!driver.available()) {
    EXPECT_FALSE(driver.unavailable_reason().empty());
    EXPECT_THROW(driver.compute_capability(0), CudaError);
    return;
  }
  EXPECT_GE(driver.device_count(), 1);
  EXPECT_GE(driver.compute_capability(0), 50);
  EXPECT_FALSE(driver.device_name(0).empty());
  EXPECT_GE(driver.driver_version(), 12000);
}

TEST(CudaDriverTest, CheckThrowsWithCallAndCode) {
  CudaDriver& driver = CudaDriver::get();
  EXPECT_NO_THROW(driver.check(CUDA_SUCCESS, "cuInit"));
  try {
    driver.check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc");
    FAIL() << "check did not throw";
  } catch (const CudaError& error) {
    EXPECT_EQ(error.code(), CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(std::string(error.what()).rfind("cuMemAlloc: ", 0), 0u) << error.what();
    if (driver.available()) {
      EXPECT_NE(std::string(error.what()).find("CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos);
    }
  }
}

// Holds device memory for the length of a test.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes) {
    CudaDriver& driver = CudaDriver::get();
    driver.check(driver.cuMemAlloc(&pointer_, bytes), "cuMemAlloc");
  }
  ~DeviceBuffer() { CudaDriver::get().cuMemFree(pointer_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  CUdeviceptr& get() { return pointer_; }

 private:
  CUdeviceptr pointer_ = 0;
};

// y = a * x + y on the GPU, with values chosen so every result is exact in float and double.
template <typename T>
void run_axpy(CudaModule& module, const char* kernel, bool use_graph) {
  CudaDriver& driver = CudaDriver::get();
  constexpr int n = 1000;
  std::vector<T> x(n);
  std::vector<T> y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<T>(i);
    y[i] = static_cast<T>(2 * i);
  }
  DeviceBuffer dx(n * sizeof(T));
  DeviceBuffer dy(n * sizeof(T));
  driver.check(driver.cuMemcpyHtoD(dx.get(), x.data(), n * sizeof(T)), "cuMemcpyHtoD");
  driver.check(driver.cuMemcpyHtoD(dy.get(), y.data(), n * sizeof(T)), "cuMemcpyHtoD");
  T a = static_cast<T>(0.5);
  int count = n;
  void* args[] = {&dx.get(), &dy.get(), &a, &count};
  CUfunction function = module.function(kernel);
  const Dim3 grid{(n + 255) / 256};
  const Dim3 block{256};
  if (!use_graph) {
    module.launch(function, grid, block, 0, nullptr, args);
    driver.check(driver.cuCtxSynchronize(), "cuCtxSynchronize");
  } else {
    CUstream stream = nullptr;
    driver.check(driver.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    driver.check(driver.cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
    module.launch(function, grid, block, 0, stream, args);
    CUgraph graph = nullptr;
    driver.check(driver.cuStreamEndCapture(stream, &graph), "cuStreamEndCapture");
    CUgraphExec exec = nullptr;
    driver.check(driver.cuGraphInstantiate(&exec, graph, 0), "cuGraphInstantiate");
    driver.check(driver.cuGraphLaunch(exec, stream), "cuGraphLaunch");
    driver.check(driver.cuStreamSynchronize(stream), "cuStreamSynchronize");
    driver.check(driver.cuGraphExecDestroy(exec), "cuGraphExecDestroy");
    driver.check(driver.cuGraphDestroy(graph), "cuGraphDestroy");
    driver.check(driver.cuStreamDestroy(stream), "cuStreamDestroy");
  }
  driver.check(driver.cuMemcpyDtoH(y.data(), dy.get(), n * sizeof(T)), "cuMemcpyDtoH");
  for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], static_cast<T>(2.5 * i)) << kernel << " at " << i;
}

class CudaLaunchTest : public ::testing::TestWithParam<bool> {};

TEST_P(CudaLaunchTest, CompilesLaunchesAndChecksValues) {
  SKIP_WITHOUT_GPU();
  CudaDriver& driver = CudaDriver::get();
  CompileOptions options;
  options.arch = driver.compute_capability(0);
  options.cubin = GetParam();
  CompileResult compiled = NvrtcCompiler::get().compile(test::kAxpySource, "axpy.cu", options);
  ASSERT_TRUE(compiled.ok) << compiled.log;
  CudaModule module(compiled.binary);
  run_axpy<float>(module, "axpy_f32", /*use_graph=*/false);
  run_axpy<double>(module, "axpy_f64", /*use_graph=*/false);
  run_axpy<float>(module, "axpy_f32", /*use_graph=*/true);
  EXPECT_THROW(module.function("no_such_kernel"), CudaError);
}

INSTANTIATE_TEST_SUITE_P(Binaries, CudaLaunchTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Cubin" : "Ptx"; });

// More than the 48 KiB of dynamic shared memory a kernel gets without opting in.
TEST(CudaModuleTest, LaunchOptsIntoLargeSharedMemory) {
  SKIP_WITHOUT_GPU();
  CudaDriver& driver = CudaDriver::get();
  constexpr int n = 16 * 1024;  // 64 KiB of floats
  CUdevice device = 0;
  int optin = 0;
  driver.check(driver.cuDeviceGet(&device, 0), "cuDeviceGet");
  driver.check(driver.cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device),
               "cuDeviceGetAttribute");
  if (optin < n * static_cast<int>(sizeof(float))) GTEST_SKIP() << "GPU has only " << optin << " bytes of shared memory";
  const char* source = R"(
extern "C" __global__ void reverse(const float* x, float* y, int n) {
  extern __shared__ float tile[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) tile[i] = x[i];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = tile[n - 1 - i];
}
)";
  CompileOptions options;
  options.arch = driver.compute_capability(0);
  CompileResult compiled = NvrtcCompiler::get().compile(source, "reverse.cu", options);
  ASSERT_TRUE(compiled.ok) << compiled.log;
  CudaModule module(compiled.binary);
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i);
  std::vector<float> y(n, -1.0f);
  DeviceBuffer dx(n * sizeof(float));
  DeviceBuffer dy(n * sizeof(float));
  driver.check(driver.cuMemcpyHtoD(dx.get(), x.data(), n * sizeof(float)), "cuMemcpyHtoD");
  int count = n;
  void* args[] = {&dx.get(), &dy.get(), &count};
  module.launch(module.function("reverse"), Dim3{1}, Dim3{256}, n * sizeof(float), nullptr, args);
  driver.check(driver.cuCtxSynchronize(), "cuCtxSynchronize");
  driver.check(driver.cuMemcpyDtoH(y.data(), dy.get(), n * sizeof(float)), "cuMemcpyDtoH");
  for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], static_cast<float>(n - 1 - i)) << "at " << i;
}

TEST(CudaModuleTest, BadImageThrowsWithDriverMessage) {
  SKIP_WITHOUT_GPU();
  try {
    CudaModule module(".version 1.0\n.target sm_90\nthis is not ptx\n");
    FAIL() << "loading garbage did not throw";
  } catch (const CudaError& error) {
    EXPECT_NE(std::string(error.what()).find("cuModuleLoadDataEx"), std::string::npos) << error.what();
  }
}

TEST(CudaModuleTest, MoveKeepsTheModule) {
  SKIP_WITHOUT_GPU();
  CompileOptions options;
  options.arch = CudaDriver::get().compute_capability(0);
  CompileResult compiled = NvrtcCompiler::get().compile(test::kAxpySource, "axpy.cu", options);
  ASSERT_TRUE(compiled.ok) << compiled.log;
  CudaModule first(compiled.binary);
  CUmodule handle = first.handle();
  CudaModule second(std::move(first));
  EXPECT_EQ(first.handle(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from state is specified
  EXPECT_EQ(second.handle(), handle);
  EXPECT_NE(second.function("axpy_f32"), nullptr);
}

}  // namespace
}  // namespace gbc
