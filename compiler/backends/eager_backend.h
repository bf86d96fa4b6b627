// The eager reference as a Backend: the graph runs op by op on ATen (compiler/aten/eager_executor.h),
// so the harness can run it through the same interface as the compiled paths it judges.
#pragma once

#include <memory>

#include "compiler/backends/backend.h"

namespace gbc {

std::unique_ptr<Backend> make_eager_backend();

}  // namespace gbc
