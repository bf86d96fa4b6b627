// Writing a reduction: the reduced model.yaml with its header, the failing inputs as JSON, and
// the summary (declared in reducer.h). Test: tests/reduce/reducer_test.cpp.
#include <ATen/ATen.h>
#include <torch/version.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/aten/aten_convert.h"
#include "harness/inputs/tensor_files.h"
#include "harness/model/model_writer.h"
#include "harness/reduce/reducer.h"
#include "harness/version.h"

namespace gbc {
namespace {

std::string seconds(double s) {
  std::ostringstream o;
  o.setf(std::ios::fixed);
  o.precision(1);
  o << s << " s";
  return o.str();
}

}  // namespace

std::string kept_layouts_text(const ReduceResult& r) {
  std::string out;
  for (const NamedTensor& in : r.inputs) {
    if (in.layout.layout == Layout::Contiguous) continue;
    out += (out.empty() ? "" : ", ") + in.name + " " + layout_name(in.layout.layout) +
           (in.layout.layout == Layout::Transposed ? "" : " along dim " + std::to_string(in.layout.dim));
  }
  return out;
}

namespace {

std::string header(const ReduceResult& r, const std::string& source) {
  std::ostringstream h;
  h << "Reduced by `gbcheck reduce` from " << source << " (case " << r.case_index << ", seed " << r.seed << ").\n"
    << "Reproduces: " << r.signature.str() << " (signature " << r.signature.hash() << ")\n"
    << "Nodes: " << r.nodes_before << " -> " << r.nodes_after << "; " << r.checks << " checks in "
    << seconds(r.elapsed_s) << ".\n"
    << "The failing input values are in inputs.json beside this file.\n";
  if (std::string views = kept_layouts_text(r); !views.empty())
    h << "The failure needs these inputs as views (inputs.json lays them out so): " << views << "\n";
  if (r.reproduces_with_drawn_inputs)
    h << "Replay: " << r.replay_command("model.yaml") << "  (the drawn inputs fail the same way)";
  else
    h << "The drawn inputs do not reproduce it: replay with the values in inputs.json.";
  if (r.status == ReduceResult::Status::Nondeterministic) h << "\nStopped early: " << r.note;
  if (r.budget_exhausted) h << "\nStopped at the check budget (--max-checks): it may reduce further.";
  return h.str();
}

}  // namespace

nlohmann::json inputs_json(const std::vector<NamedTensor>& inputs) {
  nlohmann::json out = nlohmann::json::object();
  for (const NamedTensor& in : inputs) {
    at::Tensor t = in.tensor.contiguous().cpu();
    const DType dtype = from_aten(t.scalar_type());
    nlohmann::json values = nlohmann::json::array();
    at::Tensor flat = t.reshape({-1}).to(at::kDouble);
    const double* data = flat.data_ptr<double>();
    for (int64_t i = 0; i < flat.numel(); ++i) {
      double v = data[i];
      if (std::isnan(v)) values.push_back("nan");
      else if (std::isinf(v)) values.push_back(v > 0 ? "inf" : "-inf");
      else if (!is_floating(dtype)) values.push_back(static_cast<int64_t>(v));
      else values.push_back(v);
    }
    out[in.name] = {{"dtype", std::string(dtype_name(dtype))}, {"shape", t.sizes().vec()}, {"values", values}};
    write_layout(in.layout, out[in.name]);
  }
  return out;
}

nlohmann::json reduction_summary_json(const ReduceResult& r, const std::string& source, const std::string& out_dir) {
  nlohmann::json j;
  j["schema"] = "gbcheck.reduce/v1";
  j["gbcheck_version"] = kGbcheckVersion;
  j["torch_version"] = TORCH_VERSION;
  j["status"] = ReduceResult::status_name(r.status);
  j["model"] = source;
  j["out_dir"] = out_dir.empty() ? nlohmann::json(nullptr) : nlohmann::json(out_dir);
  j["backend"] = r.backend;
  j["reference"] = r.reference;
  j["case"] = r.case_index;
  j["seed"] = r.seed;
  j["note"] = r.note;
  j["original_signature"] = r.status == ReduceResult::Status::NotFailing ? nlohmann::json(nullptr) : r.original.to_json();
  j["signature"] = r.status == ReduceResult::Status::NotFailing ? nlohmann::json(nullptr) : r.signature.to_json();
  j["nodes_before"] = r.nodes_before;
  j["nodes_after"] = r.nodes_after;
  j["candidates"] = r.candidates;
  j["checks"] = r.checks;
  j["accepted"] = r.accepted;
  j["budget_exhausted"] = r.budget_exhausted;
  j["elapsed_s"] = r.elapsed_s;
  j["reproduces_with_drawn_inputs"] = r.reproduces_with_drawn_inputs;
  j["replay_case"] = r.reproduces_with_drawn_inputs ? nlohmann::json(r.replay_case) : nlohmann::json(nullptr);
  j["injected_fault"] = r.inject_fault.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.inject_fault);
  j["inject_fault"] = j["injected_fault"];  // its first name, kept for readers of v1
  // The inputs the failure needs as views, laid out so in inputs.json ({input, layout, dim}).
  j["kept_layouts"] = nlohmann::json::array();
  for (const NamedTensor& in : r.inputs) {
    if (in.layout.layout == Layout::Contiguous) continue;
    nlohmann::json e = {{"input", in.name}};
    write_layout(in.layout, e);
    j["kept_layouts"].push_back(e);
  }
  return j;
}

void write_reduction(const ReduceResult& r, const std::string& source, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create " + dir + ": " + ec.message());
  auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = (fs::path(dir) / name).string();
    std::ofstream f(path);
    f << text;
    if (!f.flush()) throw std::runtime_error("cannot write " + path);
  };
  WriteOptions w;
  w.header_comment = header(r, source);
  write("model.yaml", write_model_yaml(r.model, w));
  write("inputs.json", inputs_json(r.inputs).dump(2) + "\n");
  write("summary.json", reduction_summary_json(r, source, dir).dump(2) + "\n");
}

}  // namespace gbc
