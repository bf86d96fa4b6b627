// Which ops LibTorch 1.13's CPU kernels implement for float16 and bfloat16. The validator accepts
// `exp` of a float16 tensor (it is valid on CUDA and in LibTorch 2.x), but eager 1.13 on the CPU
// raises "exp_vml_cpu not implemented for 'Half'", so generated graphs for the CPU avoid those
// pairs. Measured with LibTorch 1.13.0; tested in tests/fuzz/graph_generator_test.cpp.
#pragma once

#include <string>

#include "compiler/ir/dtype.h"
#include "compiler/ir/op_id.h"

namespace gbc {

/// Whether `op` runs on `dtype` on LibTorch 1.13's CPU. Dtype rules the validator enforces (mean
/// needs a float, ...) are not repeated here.
bool cpu_kernel_exists(OpId op, DType dtype);
/// The same for a custom kernel of the built-in registry, by its name.
bool cpu_custom_kernel_exists(const std::string& kernel, DType dtype);

}  // namespace gbc
