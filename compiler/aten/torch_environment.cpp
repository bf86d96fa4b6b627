#include "compiler/aten/torch_environment.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <torch/version.h>

namespace gbc {

std::string torch_version() { return TORCH_VERSION; }

bool torch_has_cuda() { return at::hasCUDA(); }

void use_one_aten_thread() { at::set_num_threads(1); }

}  // namespace gbc
