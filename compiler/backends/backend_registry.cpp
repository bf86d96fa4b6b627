// The backends gbcheck knows by name, in the order of the ladder from the eager reference to fully
// compiled paths. Adding a backend is one entry here.
#include "compiler/backends/backend.h"
#include "compiler/backends/decomp_backend.h"
#include "compiler/backends/eager_backend.h"
#include "compiler/backends/gbc_backend.h"
#include "compiler/backends/gbc_cudagraphs_backend.h"
#include "compiler/backends/gbc_interp_backend.h"
#include "compiler/backends/nnc_backend.h"
#include "compiler/backends/trace_backend.h"

namespace gbc {

const std::vector<BackendInfo>& backend_registry() {
  static const std::vector<BackendInfo> registry = [] {
    std::vector<BackendInfo> r;
    r.push_back({"eager", "the reference: every op on ATen, as a PyTorch user's eager program runs", &make_eager_backend,
                 /*compiled=*/false});
    r.push_back({"nnc", "LibTorch's TorchScript TensorExpr fuser (NNC) on the profiling executor", &make_nnc_backend,
                 /*compiled=*/true});
    r.push_back({"trace", "gbc's capture alone: regions between graph breaks, guards, recompiles; ops run on ATen",
                 &make_trace_backend, /*compiled=*/true});
    r.push_back({"decomp", "trace plus gbc's graph pipeline (functionalize, decompose, fold, cse, dce); ops run on ATen",
                 &make_decomp_backend, /*compiled=*/true});
    r.push_back({"gbc-interp", "decomp plus fusion: fused kernels run by gbc's kernel interpreter, extern calls on ATen",
                 &make_gbc_interp_backend, /*compiled=*/true});
    r.push_back({"gbc", "gbc fully compiled: fused kernels as native code (C++ per graph, host compiler, dlopen)",
                 &make_gbc_backend, /*compiled=*/true});
    r.push_back({"gbc-cudagraphs", "gbc on CUDA with its kernel launches captured once into a CUDA graph and replayed "
                 "(static shapes, device cuda only)", &make_gbc_cudagraphs_backend, /*compiled=*/true});
    return r;
  }();
  return registry;
}

std::unique_ptr<Backend> make_backend(const std::string& name) {
  const BackendInfo* info = find_backend(name);
  return info ? info->create() : nullptr;
}

const BackendInfo* find_backend(const std::string& name) {
  for (const auto& b : backend_registry())
    if (b.name == name) return &b;
  return nullptr;
}

}  // namespace gbc
