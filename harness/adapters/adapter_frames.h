// The wire format of the adapter protocol (docs/adapters.md, "gbcheck-adapter/1"): every message is
// a frame, a 16-byte header ("GBAD", a kind byte, 3 zero bytes, the payload's length as a
// little-endian uint64) and the payload. A control frame ('J') holds one JSON object; a tensor
// frame ('T') holds a little-endian uint32 meta length, the meta JSON {"dtype", "shape"} and the
// tensor's bytes, C-contiguous, little-endian. Numbers never travel as JSON text.
// Everything here checks what it reads and throws ProtocolError naming what was wrong.
// Test: tests/adapters/adapter_frames_test.cpp.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace gbc {

constexpr const char* kAdapterProtocol = "gbcheck-adapter/1";
/// Additions to gbcheck-adapter/1 that an adapter of an earlier revision ignores: 2 adds the
/// node_values feature (docs/adapters.md).
constexpr int kAdapterRevision = 2;

/// The adapter sent something that is not the protocol: a bad frame, a message out of order,
/// a tensor that does not match its header or the model.
class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct FrameHeader {
  char kind = 'J';  // 'J' control (JSON), 'T' tensor
  uint64_t length = 0;
};

constexpr size_t kFrameHeaderSize = 16;
/// A payload above this is garbage, not a tensor (1 TiB): it would be read into memory.
constexpr uint64_t kMaxFramePayload = uint64_t{1} << 40;

std::string encode_frame_header(const FrameHeader& header);
/// Throws ProtocolError on a wrong magic, kind or length.
FrameHeader decode_frame_header(const std::string& bytes);

/// A whole control frame (header and payload).
std::string encode_control(const nlohmann::json& message);
/// A control frame's payload: a JSON object with a string "type". Throws ProtocolError.
nlohmann::json decode_control(const std::string& payload);

/// A whole tensor frame of `t` (any layout and device: written contiguous, from the CPU).
std::string encode_tensor(const at::Tensor& t);
/// A tensor frame's payload as a CPU tensor. Throws ProtocolError when the meta is malformed or
/// the byte count differs from what dtype and shape need.
at::Tensor decode_tensor(const std::string& payload);

}  // namespace gbc
