#include "harness/repro/repro.h"

#include <ATen/ATen.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "compiler/aten/aten_convert.h"
#include "compiler/aten/eager_executor.h"
#include "compiler/backends/torchscript_emitter.h"
#include "harness/bisect/stage_probe.h"
#include "harness/inputs/input_generator.h"
#include "harness/model/model_writer.h"
#include "harness/repro/repro_readme.h"
#include "harness/repro/repro_sources.h"
#include "harness/inputs/tensor_files.h"
#include "harness/sandbox/sandbox.h"
#include "harness/version.h"

namespace gbc {
namespace {

void write_text(const std::string& dir, const std::string& name, const std::string& text, ReproResult& r) {
  std::ofstream out(std::filesystem::path(dir) / name);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + dir + "/" + name);
  r.files.push_back(name);
}

// The failing case: --case K as given, else the first case the sandboxed check fails (a crash
// names no case, so the cases are then tried one by one).
std::optional<int> find_failing_case(const Model& model, const ReproOptions& o) {
  if (o.case_index) return o.case_index;
  ProbeOptions probe;
  probe.run = o.run;
  probe.timeout_s = o.timeout_s;
  ProbeResult all = probe_backend(model, o.backend, probe);
  if (!all.diverged) return std::nullopt;
  if (all.failing_case >= 0) return all.failing_case;
  for (int k = 0; k < o.run.cases + static_cast<int>(o.run.given_cases.size()); ++k) {
    probe.run.only_case = k;
    if (probe_backend(model, o.backend, probe).diverged) return k;
  }
  return std::nullopt;
}

// Runs the backend on the case in a child (twice: gbc compiles natively after its first call, and
// the check judges what later calls do); the child saves the outputs under observed/.
SandboxResult run_backend(const Model& model, const ReproOptions& o, const TestCase& tc) {
  SandboxLimits limits;
  limits.timeout_s = o.timeout_s;
  return run_sandboxed(
      [&]() -> nlohmann::json {
        std::unique_ptr<Backend> backend = make_backend(o.backend);
        backend->prepare(model.graph, o.run.backend_options);
        std::vector<at::Tensor> out;
        for (int call = 0; call < 2; ++call) out = backend->run(tc.fresh_inputs());
        nlohmann::json entries = nlohmann::json::array();
        for (size_t i = 0; i < out.size(); ++i) {
          const std::string name = model.graph.name_of(model.graph.outputs[i]);
          entries.push_back(save_tensor_file(out[i], name, o.out_dir, "observed/" + name + ".bin"));
        }
        return entries;
      },
      limits);
}

// The model as given (its comments kept); a model built in memory (a generated or reduced graph
// has no file) is written from its IR.
std::string model_text(const Model& model) {
  if (model.path.empty()) return write_model_yaml(model);
  std::ifstream model_file(model.path);
  std::string text((std::istreambuf_iterator<char>(model_file)), std::istreambuf_iterator<char>());
  if (text.empty()) throw std::runtime_error("cannot read the model file " + model.path);
  return text;
}

OutputDiff diff_output(const std::string& name, const at::Tensor& expected, const at::Tensor& observed, const Tolerance& tol,
                       bool equal_nan) {
  OutputDiff d;
  d.output = name;
  d.rtol = tol.rtol;
  d.atol = tol.atol;
  at::Tensor e = expected.to(at::kDouble).contiguous().flatten(), a = observed.to(at::kDouble).contiguous().flatten();
  d.elements = e.numel();
  if (expected.sizes() != observed.sizes()) {
    d.mismatches = d.elements;
    return d;
  }
  const double* ep = e.data_ptr<double>();
  const double* ap = a.data_ptr<double>();
  double worst = -1.0;
  for (int64_t k = 0; k < d.elements; ++k) {
    bool nan = std::isnan(ep[k]) || std::isnan(ap[k]);
    bool close = nan ? equal_nan && std::isnan(ep[k]) && std::isnan(ap[k])
                     : (std::isinf(ep[k]) || std::isinf(ap[k])) ? ep[k] == ap[k]
                                                                 : std::abs(ap[k] - ep[k]) <= tol.atol + tol.rtol * std::abs(ep[k]);
    if (close) continue;
    ++d.mismatches;
    double err = nan || std::isinf(ep[k]) || std::isinf(ap[k]) ? INFINITY : std::abs(ap[k] - ep[k]);
    if (err > worst) {
      worst = err;
      d.worst_index = k;
      d.expected = ep[k];
      d.observed = ap[k];
    }
  }
  return d;
}

}  // namespace

ReproResult write_repro(const Model& model, const ReproOptions& o) {
  ReproResult r;
  r.seed = model.check.seed;
  std::optional<int> failing = find_failing_case(model, o);
  if (!failing) return r;
  r.case_index = *failing;

  InputGenerator generator(model, c10::Device(c10::DeviceType::CPU));
  TestCase tc = generator.run_case(r.case_index, o.run.cases, o.run.given_cases, o.run.shrink_path);
  r.input_descriptions = tc.descriptions;
  std::vector<at::Tensor> expected;
  try {
    expected = run_eager(model.graph, tc.fresh_inputs());
  } catch (const OpError& e) {
    throw std::runtime_error(std::string("the eager reference fails on case ") + std::to_string(r.case_index) + ": " + e.what());
  }

  std::filesystem::create_directories(o.out_dir);
  nlohmann::json m;
  m["format"] = "gbcheck.repro/v1";
  m["gbcheck_version"] = kGbcheckVersion;
  m["model"] = model.name;
  m["backend"] = o.backend;
  m["seed"] = r.seed;
  m["case"] = r.case_index;
  m["injected_fault"] = o.run.backend_options.inject_fault;
  m["byte_order"] = "little";
  m["inputs"] = nlohmann::json::array();
  const auto specs = model.all_tensor_specs();
  for (size_t i = 0; i < tc.tensors.size(); ++i) {
    nlohmann::json e = save_tensor_file(tc.tensors[i], specs[i]->name, o.out_dir, "inputs/" + specs[i]->name + ".bin");
    e["role"] = specs[i]->is_param ? "param" : "input";
    m["inputs"].push_back(e);
    r.files.push_back(e["file"]);
  }
  m["expected"] = nlohmann::json::array();
  m["tolerance"] = nlohmann::json::object();
  for (size_t i = 0; i < expected.size(); ++i) {
    const std::string name = model.graph.name_of(model.graph.outputs[i]);
    m["expected"].push_back(save_tensor_file(expected[i], name, o.out_dir, "expected/" + name + ".bin"));
    r.files.push_back("expected/" + name + ".bin");
    Tolerance tol = model.check.tolerance_for(from_aten(expected[i].scalar_type()), name);
    m["tolerance"][name] = {{"rtol", tol.rtol}, {"atol", tol.atol}};
  }

  SandboxResult run = run_backend(model, o, tc);
  if (run.ok()) {
    m["observed"] = run.value;
    for (size_t i = 0; i < run.value.size() && i < expected.size(); ++i) {
      const std::string name = run.value[i].at("name");
      r.files.push_back(run.value[i].at("file"));
      at::Tensor observed = load_tensor_file(run.value[i], o.out_dir);
      Tolerance tol{m["tolerance"][name]["rtol"].get<double>(), m["tolerance"][name]["atol"].get<double>()};
      OutputDiff d = diff_output(name, expected[i], observed, tol, model.check.equal_nan);
      r.reproduced = r.reproduced || d.mismatches > 0;
      r.diffs.push_back(d);
    }
  } else {
    r.observed_error = run.status == SandboxResult::Status::Exception ? run.exception_type + ": " + run.error : run.summary();
    m["observed_error"] = r.observed_error;
    r.reproduced = true;
  }

  TorchScriptProgram program = emit_torchscript(model.graph);
  write_text(o.out_dir, "model.yaml", model_text(model), r);
  write_text(o.out_dir, "manifest.json", m.dump(2) + "\n", r);
  write_text(o.out_dir, "repro.py", repro_py(program, m), r);
  write_text(o.out_dir, "repro.cpp", repro_cpp(program, m), r);
  write_text(o.out_dir, "CMakeLists.txt", repro_cmake(), r);
  write_text(o.out_dir, "README.md", repro_readme(model, o, r), r);
  return r;
}

}  // namespace gbc
