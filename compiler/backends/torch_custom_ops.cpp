// The `custom` kernels (compiler/ir/custom_ops.h) registered as PyTorch operators gbcheck::<name>,
// so that TorchScript can call them as torch.ops.gbcheck.<name>(...) the way a user calls a custom
// op that has no fake implementation: the fuser cannot see inside and leaves them unfused. Each
// operator runs the eager reference's ATen implementation (run_custom_kernel).
//
// Static-library note: nothing names these registrations, so the linker would drop this object
// file; nnc_backend.cpp calls ensure_custom_ops_registered() to pull it in.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <torch/library.h>

#include <string>
#include <vector>

#include "compiler/aten/custom_kernels.h"
#include "compiler/ir/custom_ops.h"

namespace gbc {
namespace {

constexpr const char* kNamespace = "gbcheck";

// One boxed kernel serves every operator: the schema tells which kernel and how many tensors.
void run_boxed(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const c10::FunctionSchema& schema = op.schema();
  size_t n = schema.arguments().size();
  std::vector<at::Tensor> args;
  args.reserve(n);
  for (size_t i = 0; i < n; ++i) args.push_back(torch::jit::peek(*stack, i, n).toTensor());
  torch::jit::drop(*stack, n);
  std::string name = schema.name().substr(std::string(kNamespace).size() + 2);  // drop "gbcheck::"
  torch::jit::push(*stack, run_custom_kernel(name, args));
}

std::string schema_of(const CustomKernelInfo& k) {
  std::string s = k.name + "(";
  for (int i = 0; i < k.num_args; ++i) s += (i ? ", Tensor a" : "Tensor a") + std::to_string(i);
  return s + ") -> Tensor";
}

}  // namespace

void ensure_custom_ops_registered() {
  // The registration happens at static initialization (TORCH_LIBRARY below); calling this only
  // makes the linker keep this object file.
}

}  // namespace gbc

TORCH_LIBRARY(gbcheck, m) {
  for (const auto& k : gbc::custom_kernels())
    m.def(gbc::schema_of(k).c_str(), torch::CppFunction::makeFromBoxedFunction<&gbc::run_boxed>());
}
