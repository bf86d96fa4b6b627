#include "harness/model/weights_file.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace gbc {
namespace {

const std::vector<std::pair<DType, const char*>>& dtype_names() {
  static const std::vector<std::pair<DType, const char*>> names = {
      {DType::Bool, "BOOL"}, {DType::UInt8, "U8"},   {DType::Int8, "I8"},     {DType::Int16, "I16"},
      {DType::Int32, "I32"}, {DType::Int64, "I64"},  {DType::Float16, "F16"}, {DType::BFloat16, "BF16"},
      {DType::Float32, "F32"}, {DType::Float64, "F64"}};
  return names;
}

uint64_t read_le64(const std::string& bytes) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  return v;
}

std::optional<WeightsFile> invalid(std::string* error, const std::string& why) {
  *error = why;
  return std::nullopt;
}

}  // namespace

std::string safetensors_dtype(DType dtype) {
  for (const auto& [d, n] : dtype_names())
    if (d == dtype) return n;
  return "?";
}

std::optional<DType> parse_safetensors_dtype(const std::string& name) {
  for (const auto& [d, n] : dtype_names())
    if (name == n) return d;
  return std::nullopt;
}

std::optional<WeightsFile> read_weights_file(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalid(error, "cannot read the weights file '" + path + "'");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  auto bytes = std::make_shared<std::string>(buffer.str());
  if (bytes->size() < 8) return invalid(error, "the weights file '" + path + "' is truncated (" + std::to_string(bytes->size()) + " bytes)");
  const uint64_t header_size = read_le64(*bytes);
  if (header_size > bytes->size() - 8)
    return invalid(error, "the weights file '" + path + "' is truncated: its header says " + std::to_string(header_size) +
                              " bytes, the file has " + std::to_string(bytes->size() - 8) + " after the length");
  nlohmann::json header = nlohmann::json::parse(bytes->begin() + 8, bytes->begin() + 8 + static_cast<long>(header_size),
                                                nullptr, /*allow_exceptions=*/false);
  if (!header.is_object()) return invalid(error, "'" + path + "' is not a safetensors file: its header is not a JSON object");
  WeightsFile file;
  const size_t data_start = 8 + header_size;
  const size_t data_size = bytes->size() - data_start;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    const auto what = "'" + path + "' tensor '" + name + "'";
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets") ||
        !entry["dtype"].is_string() || !entry["shape"].is_array() || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2)
      return invalid(error, what + " needs dtype, shape and data_offsets [begin, end]");
    WeightsEntry e;
    auto dt = parse_safetensors_dtype(entry["dtype"].get<std::string>());
    if (!dt) return invalid(error, what + " has dtype " + entry["dtype"].get<std::string>() + ", which gbcheck does not model");
    e.dtype = *dt;
    int64_t numel = 1;
    for (const auto& d : entry["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) return invalid(error, what + " has a malformed shape");
      e.shape.push_back(d.get<int64_t>());
      numel *= e.shape.back();
    }
    const auto& offs = entry["data_offsets"];
    if (!offs[0].is_number_unsigned() || !offs[1].is_number_unsigned() || offs[0].get<uint64_t>() > offs[1].get<uint64_t>())
      return invalid(error, what + " has malformed data_offsets");
    const uint64_t begin = offs[0].get<uint64_t>(), end = offs[1].get<uint64_t>();
    if (end > data_size)
      return invalid(error, "the weights file '" + path + "' is truncated: tensor '" + name + "' ends at byte " +
                                std::to_string(end) + " of " + std::to_string(data_size));
    if (end - begin != static_cast<uint64_t>(numel) * static_cast<uint64_t>(dtype_size(e.dtype)))
      return invalid(error, what + " holds " + std::to_string(end - begin) + " bytes, its dtype and shape need " +
                                std::to_string(numel * dtype_size(e.dtype)));
    e.offset = data_start + begin;
    e.size = end - begin;
    file.tensors[name] = e;
  }
  file.bytes = bytes;
  return file;
}

bool write_weights_file(const std::string& path, const std::vector<TensorSpec>& params, std::string* error) {
  nlohmann::json header = nlohmann::json::object();
  size_t offset = 0;
  std::vector<const TensorSpec*> written;
  for (const auto& p : params) {
    if (!p.weights) continue;
    nlohmann::json shape = nlohmann::json::array();
    for (const auto& d : p.shape) shape.push_back(d.value());
    header[p.weights->tensor] = {{"dtype", safetensors_dtype(p.dtype)}, {"shape", shape},
                                 {"data_offsets", {offset, offset + p.weights->size}}};
    offset += p.weights->size;
    written.push_back(&p);
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-byte aligned, as safetensors pads it
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    *error = "cannot write '" + path + "'";
    return false;
  }
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((n >> (8 * i)) & 0xff));
  out << text;
  // The header lists tensors in name order (a JSON object); the data follows the params' order,
  // which data_offsets records.
  for (const TensorSpec* p : written) out.write(p->weights->data(), static_cast<std::streamsize>(p->weights->size));
  if (!out) {
    *error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace gbc
