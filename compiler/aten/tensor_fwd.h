// at::Tensor declared, for headers that only name it (references, return types): their includers
// then compile without LibTorch's headers and its precompiled header unless they use tensors
// themselves (cmake/torch_pch.cmake). Test: every source that includes it and LibTorch's
// definition (compiler/backends/eager_backend.cpp, ...) compiles only while the two agree.
#pragma once

namespace at {
class Tensor;
}  // namespace at
