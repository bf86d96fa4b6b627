// CUDA sources shared by the cuda tests.
#pragma once

namespace gbc::test {

// float and double elementwise kernels; no __half, so no header is needed.
inline constexpr const char* kAxpySource = R"(
extern "C" __global__ void axpy_f32(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void axpy_f64(const double* x, double* y, double a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

}  // namespace gbc::test
