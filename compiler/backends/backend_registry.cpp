// The backends gbcheck knows by name, in the order of the ladder from the eager reference to fully
// compiled paths. Adding a built-in backend is one entry here; adapters (harness/adapters/)
// register themselves at run time from configs/backends.yaml.
#include "compiler/backends/backend_registry.h"

#include "compiler/backends/backend.h"
#include "compiler/backends/decomp_backend.h"
#include "compiler/backends/eager_backend.h"
#include "compiler/backends/gbc_backend.h"
#include "compiler/backends/gbc_cudagraphs_backend.h"
#include "compiler/backends/gbc_interp_backend.h"
#include "compiler/backends/nnc_backend.h"
#include "compiler/backends/trace_backend.h"

#include <ATen/Context.h>

#include <map>
#include <stdexcept>

namespace gbc {

namespace {

std::vector<BackendInfo> built_in_backends() {
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
}

std::vector<BackendInfo>& registry() {
  static std::vector<BackendInfo> r = built_in_backends();
  return r;
}

struct Extra {
  bool external = false;
  std::function<std::string()> unavailable;
};

std::map<std::string, Extra>& extras() {
  static std::map<std::string, Extra> m = {
      {"gbc-cudagraphs", {false, [] { return at::hasCUDA() ? std::string() : std::string("needs a CUDA device"); }}}};
  return m;
}

}  // namespace

const std::vector<BackendInfo>& backend_registry() { return registry(); }

void register_backend(BackendInfo info, std::function<std::string()> unavailable) {
  const std::string name = info.name;
  bool replaced = false;
  for (BackendInfo& b : registry()) {
    if (b.name != name) continue;
    if (!is_external_backend(name)) throw std::invalid_argument("'" + name + "' is a built-in backend and cannot be redefined");
    b = std::move(info);
    replaced = true;
  }
  if (!replaced) registry().push_back(std::move(info));
  extras()[name] = {true, std::move(unavailable)};
}

bool is_external_backend(const std::string& name) {
  auto it = extras().find(name);
  return it != extras().end() && it->second.external;
}

std::string backend_unavailable_reason(const std::string& name) {
  auto it = extras().find(name);
  return it != extras().end() && it->second.unavailable ? it->second.unavailable() : "";
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
