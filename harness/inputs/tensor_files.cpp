#include "harness/inputs/tensor_files.h"

#include <ATen/ATen.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "compiler/aten/aten_convert.h"

namespace gbc {
namespace {

// The files hold little-endian bytes; on a big-endian host they would need swapping.
void require_little_endian() {
  const uint16_t probe = 1;
  if (*reinterpret_cast<const uint8_t*>(&probe) != 1)
    throw std::runtime_error("repro tensor files are little-endian; this host is big-endian");
}

}  // namespace

void write_layout(const LayoutPlan& plan, nlohmann::json& entry) {
  if (plan.layout == Layout::Contiguous) return;
  entry["layout"] = layout_name(plan.layout);
  if (plan.layout != Layout::Transposed) entry["dim"] = plan.dim;
}

at::Tensor read_layout(const nlohmann::json& entry, const at::Tensor& values) {
  if (!entry.contains("layout")) return values;
  const std::string name = entry["layout"].is_string() ? entry["layout"].get<std::string>() : entry["layout"].dump();
  std::optional<Layout> layout;
  for (Layout l : {Layout::Contiguous, Layout::Transposed, Layout::Sliced, Layout::Expanded})
    if (name == layout_name(l)) layout = l;
  if (!layout) throw std::runtime_error("unknown layout \"" + name + "\" (contiguous, transposed, sliced or expanded)");
  const bool needs_dim = *layout == Layout::Sliced || *layout == Layout::Expanded;
  if (needs_dim && !(entry.contains("dim") && entry["dim"].is_number_integer()))
    throw std::runtime_error("layout \"" + name + "\" needs an integer \"dim\"");
  const int64_t dim = needs_dim ? entry["dim"].get<int64_t>() : 0;
  const LayoutPlan plan = fit_layout(values, *layout, dim);
  if (plan.layout != *layout)
    throw std::runtime_error("layout \"" + name + "\"" + (needs_dim ? " along dim " + std::to_string(dim) : "") +
                             " does not fit these values" +
                             (*layout == Layout::Expanded ? " (the dim must exist, be longer than 1 and hold equal values along it)" : ""));
  return with_layout(values, plan);
}

nlohmann::json save_tensor_file(const at::Tensor& tensor, const std::string& name, const std::string& dir,
                                const std::string& relative_path) {
  require_little_endian();
  at::Tensor t = tensor.detach().to(at::kCPU).contiguous();
  std::filesystem::path path = std::filesystem::path(dir) / relative_path;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.numel() * t.element_size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
  nlohmann::json e;
  e["name"] = name;
  e["dtype"] = std::string(dtype_name(from_aten(t.scalar_type())));
  e["shape"] = t.sizes().vec();
  e["file"] = relative_path;
  write_layout(layout_of(tensor), e);
  return e;
}

at::Tensor load_tensor_file(const nlohmann::json& entry, const std::string& dir) {
  require_little_endian();
  std::optional<DType> dtype = parse_dtype(entry.at("dtype").get<std::string>());
  if (!dtype) throw std::runtime_error("unknown dtype in repro manifest: " + entry.at("dtype").get<std::string>());
  at::Tensor t = at::empty(entry.at("shape").get<std::vector<int64_t>>(), at::TensorOptions().dtype(to_aten(*dtype)));
  std::filesystem::path path = std::filesystem::path(dir) / entry.at("file").get<std::string>();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  const auto bytes = static_cast<std::streamsize>(t.numel() * t.element_size());
  in.read(static_cast<char*>(t.data_ptr()), bytes);
  if (in.gcount() != bytes || in.peek() != std::char_traits<char>::eof())
    throw std::runtime_error(path.string() + " does not hold " + std::to_string(bytes) + " bytes");
  return read_layout(entry, t);
}

}  // namespace gbc
