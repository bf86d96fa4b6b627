#include "harness/adapters/adapter_frames.h"

#include <ATen/ops/empty.h>

#include <cstring>

#include "compiler/aten/aten_convert.h"
#include "compiler/ir/dtype.h"

namespace gbc {
namespace {

constexpr char kMagic[4] = {'G', 'B', 'A', 'D'};

// Little-endian unsigned integers (uint32_t, uint64_t), as the protocol writes every length.
template <typename U>
void put_le(std::string& out, U v) {
  for (size_t i = 0; i < sizeof(U); ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

template <typename U>
U get_le(const std::string& in, size_t at) {
  U v = 0;
  for (size_t i = 0; i < sizeof(U); ++i) v |= U{static_cast<unsigned char>(in[at + i])} << (8 * i);
  return v;
}

std::string printable(const std::string& bytes) {
  std::string s;
  for (unsigned char c : bytes) s += (c >= 32 && c < 127) ? std::string(1, static_cast<char>(c)) : "\\x" + std::string(1, "0123456789abcdef"[c >> 4]) + "0123456789abcdef"[c & 15];
  return s;
}

std::string frame(char kind, const std::string& payload) {
  return encode_frame_header({kind, payload.size()}) + payload;
}

}  // namespace

std::string encode_frame_header(const FrameHeader& header) {
  std::string out(kMagic, 4);
  out.push_back(header.kind);
  out.append(3, '\0');
  put_le<uint64_t>(out, header.length);
  return out;
}

FrameHeader decode_frame_header(const std::string& bytes) {
  if (bytes.size() != kFrameHeaderSize) throw ProtocolError("bad frame: a header is 16 bytes, got " + std::to_string(bytes.size()));
  if (std::memcmp(bytes.data(), kMagic, 4) != 0)
    throw ProtocolError("bad frame: expected the magic GBAD, got '" + printable(bytes.substr(0, 4)) +
                        "' (did the adapter print to stdout?)");
  FrameHeader h;
  h.kind = bytes[4];
  if (h.kind != 'J' && h.kind != 'T') throw ProtocolError("bad frame: unknown kind '" + printable(bytes.substr(4, 1)) + "'");
  h.length = get_le<uint64_t>(bytes, 8);
  if (h.length > kMaxFramePayload) throw ProtocolError("bad frame: payload of " + std::to_string(h.length) + " bytes");
  return h;
}

std::string encode_control(const nlohmann::json& message) { return frame('J', message.dump()); }

nlohmann::json decode_control(const std::string& payload) {
  nlohmann::json j = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw ProtocolError("bad control message: not JSON: " + printable(payload.substr(0, 80)));
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
    throw ProtocolError("bad control message: not an object with a string \"type\": " + printable(payload.substr(0, 80)));
  return j;
}

std::string encode_tensor(const at::Tensor& t) {
  at::Tensor c = t.cpu().contiguous();
  nlohmann::json meta = {{"dtype", std::string(dtype_name(from_aten(c.scalar_type())))}, {"shape", c.sizes().vec()}};
  std::string m = meta.dump();
  std::string payload;
  const size_t bytes = c.numel() * c.element_size();
  payload.reserve(4 + m.size() + bytes);
  put_le<uint32_t>(payload, static_cast<uint32_t>(m.size()));
  payload += m;
  payload.append(static_cast<const char*>(c.data_ptr()), bytes);
  return frame('T', payload);
}

at::Tensor decode_tensor(const std::string& payload) {
  if (payload.size() < 4) throw ProtocolError("bad tensor: payload of " + std::to_string(payload.size()) + " bytes has no meta length");
  const uint32_t meta_len = get_le<uint32_t>(payload, 0);
  if (meta_len > payload.size() - 4)
    throw ProtocolError("bad tensor: meta of " + std::to_string(meta_len) + " bytes in a payload of " + std::to_string(payload.size()));
  nlohmann::json meta = nlohmann::json::parse(payload.substr(4, meta_len), nullptr, false);
  if (meta.is_discarded() || !meta.is_object() || !meta.contains("dtype") || !meta["dtype"].is_string() ||
      !meta.contains("shape") || !meta["shape"].is_array())
    throw ProtocolError("bad tensor: meta is not {\"dtype\": ..., \"shape\": [...]}: " + printable(payload.substr(4, std::min<uint32_t>(meta_len, 80))));
  std::optional<DType> dtype = parse_dtype(meta["dtype"].get<std::string>());
  if (!dtype) throw ProtocolError("bad tensor: unknown dtype '" + meta["dtype"].get<std::string>() + "'");
  std::vector<int64_t> shape;
  uint64_t numel = 1;
  for (const auto& d : meta["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0) throw ProtocolError("bad tensor: shape " + meta["shape"].dump() + " has a size that is not a count");
    shape.push_back(d.get<int64_t>());
    numel *= static_cast<uint64_t>(shape.back());
    if (numel > kMaxFramePayload) throw ProtocolError("bad tensor: shape " + meta["shape"].dump() + " is too large");
  }
  const uint64_t expected = numel * static_cast<uint64_t>(dtype_size(*dtype));
  const uint64_t got = payload.size() - 4 - meta_len;
  if (got != expected)
    throw ProtocolError("bad tensor: " + std::string(dtype_name(*dtype)) + meta["shape"].dump() + " needs " + std::to_string(expected) +
                        " bytes, the frame holds " + std::to_string(got));
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(to_aten(*dtype)));
  if (expected) std::memcpy(t.data_ptr(), payload.data() + 4 + meta_len, expected);
  return t;
}

}  // namespace gbc
