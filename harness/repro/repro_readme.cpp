#include "harness/repro/repro_readme.h"

#include <ATen/ATen.h>
#include <sys/utsname.h>
#include <torch/version.h>

#include <sstream>

#include "compiler/codegen/cpu_compiler.h"
#include "harness/version.h"

namespace gbc {
namespace {

std::string number(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

std::string replay_flags(const ReproOptions& o, const ReproResult& r) {
  std::string s = " --backend " + o.backend + " --seed " + std::to_string(r.seed) + " --case " + std::to_string(r.case_index);
  for (const auto& p : o.run.backend_options.disabled_passes) s += " --disable-pass " + p;
  if (!o.run.backend_options.inject_fault.empty()) s += " --inject-fault " + o.run.backend_options.inject_fault;
  return s + given_inputs_flags(o.run.given_input_paths, o.run.cases);
}

}  // namespace

std::vector<std::string> repro_environment() {
  std::vector<std::string> env;
  env.push_back(std::string("LibTorch ") + TORCH_VERSION);
  env.push_back(std::string("CUDA: ") + (at::hasCUDA() ? "available" : "not available (CPU build or no driver)"));
  env.push_back(std::string("GPU: ") + (at::hasCUDA() ? "present" : "none used (device cpu)"));
  const codegen::HostCompiler& cxx = codegen::host_compiler();
  env.push_back("host C++ compiler (gbc's kernels): " + (cxx.version.empty() ? cxx.unavailable_reason : cxx.version));
  env.push_back(std::string("gbcheck ") + kGbcheckVersion);
  struct utsname u {};
  if (uname(&u) == 0) env.push_back(std::string("OS: ") + u.sysname + " " + u.release + " " + u.machine);
  return env;
}

std::string repro_readme(const Model& model, const ReproOptions& o, const ReproResult& r) {
  std::ostringstream s;
  s << "# " << model.name << ": " << o.backend << " diverges from eager\n\n";
  s << "Made by `gbcheck repro` from " << (model.path.empty() ? "a generated model" : "`" + model.path + "`") << ", case " << r.case_index << ", seed " << r.seed
    << ". Everything here runs without gbcheck.\n\n";
  const std::string& fault = o.run.backend_options.inject_fault;
  if (!fault.empty())
    s << "**FAULT INJECTION WAS ACTIVE (`--inject-fault " << fault
      << "`): gbc miscompiled on purpose. This folder demonstrates gbcheck, not a real compiler bug.**\n\n";
  s << "## Expected\n\nEager LibTorch's outputs (`expected/*.bin`), each element within "
       "`atol + rtol * |expected|` (tolerances in `manifest.json`).\n\n";
  s << "## Observed\n\n";
  if (!r.observed_error.empty()) s << "- " << o.backend << " did not return outputs: " << r.observed_error << "\n";
  for (const OutputDiff& d : r.diffs) {
    s << "- `" << d.output << "`: ";
    if (d.mismatches == 0) {
      s << "matches (" << d.elements << " elements)\n";
      continue;
    }
    s << d.mismatches << " of " << d.elements << " elements outside rtol " << number(d.rtol) << ", atol "
      << number(d.atol) << "; worst at flat index " << d.worst_index << ": expected " << number(d.expected)
      << ", observed " << number(d.observed) << "\n";
  }
  s << "\n## Inputs\n\nSaved as raw little-endian bytes of the contiguous elements (`inputs/*.bin`, described in "
       "`manifest.json`); an input drawn as a view (transposed, sliced, expanded) has its `layout` there, and "
       "repro.py and repro.cpp lay it out as that view again.\n\n";
  for (const auto& d : r.input_descriptions) s << "- " << d << "\n";
  s << "\n## Replay\n\n```sh\n";
  s << "# C++ (LibTorch): eager against " << (o.backend == "nnc" ? "NNC" : "the saved outputs of " + o.backend) << "\n";
  s << "cmake -S . -B build -DCMAKE_PREFIX_PATH=/path/to/libtorch && cmake --build build && ./build/repro\n";
  s << "# Python (PyTorch): eager against the saved outputs and against torch.compile\npython3 repro.py\n";
  s << "# gbcheck\ngbcheck model.yaml" << replay_flags(o, r) << "\n```\n\n";
  s << "Each program exits with 1 and prints REPRODUCED when the divergence shows.\n\n";
  s << "## Environment\n\n";
  for (const auto& line : repro_environment()) s << "- " << line << "\n";
  return s.str();
}

}  // namespace gbc
