#include "harness/inputs/user_inputs.h"

#include <ATen/ATen.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <regex>

#include "compiler/aten/aten_convert.h"
#include "compiler/ir/diagnostics.h"
#include "harness/inputs/saved_cases.h"
#include "harness/inputs/tensor_files.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& where, const std::string& message, const std::string& hint = "") {
  Diagnostics d;
  d.error({where, 0, 0}, message, hint);
  throw ModelError(d);
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

nlohmann::json read_json(const fs::path& path) {
  std::ifstream f(path);
  if (!f) fail(path.string(), "cannot read the file");
  try {
    return nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception& e) {
    fail(path.string(), std::string("not valid JSON: ") + e.what());
  }
}

DType json_dtype(const nlohmann::json& entry, const std::string& where) {
  std::optional<DType> d = entry.contains("dtype") && entry["dtype"].is_string()
                               ? parse_dtype(entry["dtype"].get<std::string>())
                               : std::nullopt;
  if (!d) fail(where, "no known dtype (a string such as \"float32\")");
  return *d;
}

// A manifest.json as tensor_files.h writes it: {"inputs": [{name, dtype, shape, file}, ...]}.
GivenTensors read_manifest(const fs::path& path) {
  const nlohmann::json m = read_json(path);
  if (!m.is_object() || !m.contains("inputs") || !m["inputs"].is_array())
    fail(path.string(), "holds no \"inputs\" list", "a manifest.json as `gbcheck repro` or --save-inputs writes it");
  GivenTensors g;
  g.source = path.parent_path().string();
  for (const nlohmann::json& e : m["inputs"]) {
    const std::string name = e.value("name", "");
    const std::string where = path.string() + ": input '" + name + "'";
    json_dtype(e, where);
    try {
      g.tensors.push_back(load_tensor_file(e, path.parent_path().string()));
    } catch (const std::exception& ex) {
      fail(where, first_line(ex.what()));
    }
    g.names.push_back(name);
  }
  return g;
}

// Values as reduce's inputs.json writes them: numbers, or "nan", "inf", "-inf".
double json_number(const nlohmann::json& v, const std::string& where) {
  if (v.is_number()) return v.get<double>();
  if (v == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (v == "inf") return std::numeric_limits<double>::infinity();
  if (v == "-inf") return -std::numeric_limits<double>::infinity();
  fail(where, "a value is neither a number nor \"nan\", \"inf\" or \"-inf\": " + v.dump());
}

// reduce's inputs.json: {NAME: {dtype, shape, values: [...]}}, with layout and dim for a view.
GivenTensors read_inputs_json(const fs::path& path) {
  const nlohmann::json j = read_json(path);
  if (!j.is_object()) fail(path.string(), "not an object of inputs", "the inputs.json that `gbcheck reduce` writes");
  GivenTensors g;
  g.source = path.string();
  for (const auto& [name, e] : j.items()) {
    const std::string where = path.string() + ": input '" + name + "'";
    if (!e.is_object() || !e.contains("shape") || !e.contains("values") || !e["values"].is_array())
      fail(where, "needs dtype, shape and values");
    const DType dtype = json_dtype(e, where);
    const std::vector<int64_t> shape = e["shape"].get<std::vector<int64_t>>();
    int64_t numel = 1;
    for (int64_t s : shape) numel *= s;
    if (static_cast<int64_t>(e["values"].size()) != numel)
      fail(where, "shape " + c10::str(c10::IntArrayRef(shape)) + " needs " + std::to_string(numel) + " values, the file has " +
                      std::to_string(e["values"].size()));
    at::Tensor t;
    if (is_floating(dtype)) {
      std::vector<double> values;
      for (const auto& v : e["values"]) values.push_back(json_number(v, where));
      t = at::tensor(values, at::kDouble);
    } else {
      std::vector<int64_t> values;
      for (const auto& v : e["values"]) values.push_back(static_cast<int64_t>(json_number(v, where)));
      t = at::tensor(values, at::kLong);
    }
    g.names.push_back(name);
    try {
      g.tensors.push_back(read_layout(e, t.reshape(shape).to(to_aten(dtype))));
    } catch (const std::runtime_error& ex) {
      fail(where, ex.what());
    }
  }
  return g;
}

// A torch.save file: a tuple, list or dict of tensors (or one tensor).
GivenTensors read_torch_save(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(path.string(), "cannot read the file");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  c10::IValue value;
  try {
    value = torch::jit::pickle_load(bytes);
  } catch (const std::exception& e) {
    fail(path.string(), "not a torch.save file LibTorch can read: " + first_line(e.what()),
         "save a tuple of tensors: torch.save((x, y), FILE); LibTorch 1.13 cannot read a one-element list or "
         "one-entry dict, so save (x,) rather than [x] or {'x': x}");
  }
  GivenTensors g;
  g.source = path.string();
  auto add = [&](const c10::IValue& v, const std::string& what, const std::string& name) {
    if (!v.isTensor()) fail(path.string(), what + " is a " + v.tagKind() + ", not a tensor");
    g.tensors.push_back(v.toTensor());
    if (!name.empty()) g.names.push_back(name);
  };
  if (value.isTensor()) {
    add(value, "the value", "");
  } else if (value.isTuple()) {
    const auto& elements = value.toTupleRef().elements();
    for (size_t i = 0; i < elements.size(); ++i) add(elements[i], "element " + std::to_string(i), "");
  } else if (value.isList()) {
    const c10::List<c10::IValue> list = value.toList();
    for (size_t i = 0; i < list.size(); ++i) add(list.get(i), "element " + std::to_string(i), "");
  } else if (value.isGenericDict()) {
    for (const auto& item : value.toGenericDict()) {
      if (!item.key().isString()) fail(path.string(), "a dict key is a " + item.key().tagKind() + ", not a string");
      add(item.value(), "'" + item.key().toStringRef() + "'", item.key().toStringRef());
    }
  } else {
    fail(path.string(), "holds a " + value.tagKind() + ", not a tuple, list or dict of tensors",
         "torch.save((x, y), FILE) or torch.save({'x': x, 'y': y}, FILE)");
  }
  return g;
}

GivenTensors read_one(const fs::path& path) {
  if (fs::is_directory(path)) {
    if (fs::exists(path / "manifest.json")) return read_manifest(path / "manifest.json");
    return read_inputs_json(path / "inputs.json");
  }
  if (path.extension() == ".json") {
    const nlohmann::json j = read_json(path);
    return j.is_object() && j.contains("inputs") && j["inputs"].is_array() ? read_manifest(path) : read_inputs_json(path);
  }
  return read_torch_save(path);
}

bool holds_one_case(const fs::path& dir) { return fs::exists(dir / "manifest.json") || fs::exists(dir / "inputs.json"); }

std::string dtype_of(const at::Tensor& t) {
  const c10::ScalarType s = t.scalar_type();
  for (DType d : all_dtypes())
    if (to_aten(d) == s) return std::string(dtype_name(d));
  return c10::toString(s);
}

}  // namespace

std::vector<GivenTensors> read_given_tensors(const std::string& path) {
  const fs::path p(path);
  if (!fs::exists(p))
    fail(path, "no such file or folder",
         "--inputs takes a torch.save file, a folder with manifest.json or inputs.json, or a folder of case-K folders");
  if (!fs::is_directory(p) || holds_one_case(p)) return {read_one(p)};
  // A folder of case-K folders, as --save-inputs writes it, in K order.
  static const std::regex case_name("case-([0-9]+)");
  std::vector<std::pair<long, fs::path>> cases;
  for (const auto& entry : fs::directory_iterator(p)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && std::regex_match(name, m, case_name) && holds_one_case(entry.path()))
      cases.emplace_back(std::stol(m[1]), entry.path());
  }
  if (cases.empty())
    fail(path, "holds no manifest.json, inputs.json or case-K folders",
         "--inputs takes a torch.save file, a folder with manifest.json or inputs.json, or a folder of case-K folders");
  std::sort(cases.begin(), cases.end());
  std::vector<GivenTensors> out;
  for (const auto& [k, dir] : cases) out.push_back(read_one(dir));
  return out;
}

GivenCase match_given_tensors(const Model& model, const GivenTensors& given) {
  const std::vector<TensorSpec>& specs = model.inputs;
  std::string expected;
  for (const TensorSpec& s : specs) expected += (expected.empty() ? "" : ", ") + s.name;
  if (given.tensors.size() != specs.size() && given.names.empty())
    fail(given.source, "holds " + std::to_string(given.tensors.size()) + " tensors, the model takes " +
                           std::to_string(specs.size()) + " inputs (" + expected + ")",
         "give one tensor per input, in the model's order");
  // Each spec's tensor: by name when the file names them, else by position.
  std::vector<at::Tensor> matched;
  if (given.names.empty()) {
    matched = given.tensors;
  } else {
    for (const std::string& name : given.names)
      if (model.find_spec(name) == nullptr)
        fail(given.source, "'" + name + "' is neither an input nor a param of the model", "its inputs are: " + expected);
    for (const TensorSpec& s : specs) {
      auto it = std::find(given.names.begin(), given.names.end(), s.name);
      if (it == given.names.end()) fail(given.source, "no value for the model's input '" + s.name + "'", "its inputs are: " + expected);
      matched.push_back(given.tensors[static_cast<size_t>(it - given.names.begin())]);
    }
  }
  GivenCase c;
  c.source = given.source;
  auto input_error = [&](const TensorSpec& s, const std::string& message) {
    fail(given.source, "input '" + s.name + "': " + message, "the model declares " + s.name + ": " + std::string(dtype_name(s.dtype)) +
                                                                  shape_str(s.shape) + " (" + s.loc.str() + ")");
  };
  // Plain symbols bind first (B from x's dim 0), then every dim must agree with its expression.
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& s = specs[i];
    const at::Tensor& t = matched[i];
    // An input with a `dtypes:` list takes any of them (the cases a fuzz run's reducer saved do).
    bool dtype_ok = t.scalar_type() == to_aten(s.dtype);
    std::string takes(dtype_name(s.dtype));
    for (DType d : s.dtypes) {
      dtype_ok = dtype_ok || t.scalar_type() == to_aten(d);
      if (d != s.dtype) takes += " or " + std::string(dtype_name(d));
    }
    if (!dtype_ok) input_error(s, "dtype " + dtype_of(t) + ", the model takes " + takes);
    if (static_cast<size_t>(t.dim()) != s.shape.size())
      input_error(s, "shape " + c10::str(t.sizes()) + " has " + std::to_string(t.dim()) + " dims, the model's has " +
                         std::to_string(s.shape.size()));
    for (size_t d = 0; d < s.shape.size(); ++d) {
      if (!s.shape[d].is_symbol()) continue;
      const std::string& sym = s.shape[d].name();
      const int64_t size = t.size(static_cast<int64_t>(d));
      auto [it, inserted] = c.dims.emplace(sym, size);
      if (!inserted && it->second != size)
        input_error(s, "dim " + std::to_string(d) + " is " + std::to_string(size) + ", but " + sym + " is " +
                           std::to_string(it->second) + " in an earlier input");
      if (const DimRange* r = model.graph.dims.range(sym); r && (size < r->min || size > r->max))
        input_error(s, "dim " + std::to_string(d) + " (" + sym + ") is " + std::to_string(size) + ", outside its range " +
                           std::to_string(r->min) + ".." + std::to_string(r->max));
    }
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const TensorSpec& s = specs[i];
    const std::optional<std::vector<int64_t>> want = eval_shape(s.shape, c.dims);
    if (!want) input_error(s, "its shape uses a dim no input binds by itself");
    if (matched[i].sizes().vec() != *want)
      input_error(s, "shape " + c10::str(matched[i].sizes()) + ", the model takes " + c10::str(c10::IntArrayRef(*want)));
    c.inputs.push_back(matched[i].detach().to(at::kCPU));  // a view stays one: its layout may be the bug
    c.descriptions.push_back(s.name + ": " + dtype_of(matched[i]) + c10::str(c10::IntArrayRef(*want)) + " from " + given.source);
  }
  for (size_t k = 0; k < given.names.size(); ++k) {
    const TensorSpec& s = *model.find_spec(given.names[k]);
    if (!s.is_param) continue;
    const at::Tensor& t = given.tensors[k];
    const std::optional<std::vector<int64_t>> want = eval_shape(s.shape, c.dims);
    if (t.scalar_type() != to_aten(s.dtype) || !want || t.sizes().vec() != *want)
      fail(given.source, "param '" + s.name + "': " + dtype_of(t) + c10::str(t.sizes()) + ", the model takes " +
                             std::string(dtype_name(s.dtype)) + (want ? c10::str(c10::IntArrayRef(*want)) : shape_str(s.shape)),
           "the model declares " + s.name + " at " + s.loc.str());
    c.params.emplace_back(s.name, t.detach().to(at::kCPU));
  }
  return c;
}

std::vector<GivenCase> load_given_cases(const Model& model, const std::vector<std::string>& paths) {
  std::vector<GivenCase> out;
  for (const std::string& p : paths)
    for (const GivenTensors& g : read_given_tensors(p)) out.push_back(match_given_tensors(model, g));
  return out;
}

}  // namespace gbc
