// harness/adapters/adapter_frames.h: frames and tensors of gbcheck-adapter/1 read back what was
// written, and everything malformed is a ProtocolError that says what was wrong.
#include "harness/adapters/adapter_frames.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/equal.h>
#include <gtest/gtest.h>

namespace gbc {
namespace {

std::string payload_of(const std::string& frame) { return frame.substr(kFrameHeaderSize); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "";
}

TEST(AdapterFrames, ControlMessagesRoundTrip) {
  std::string f = encode_control({{"type", "run"}, {"model_id", 3}});
  FrameHeader h = decode_frame_header(f.substr(0, kFrameHeaderSize));
  EXPECT_EQ(h.kind, 'J');
  EXPECT_EQ(h.length, f.size() - kFrameHeaderSize);
  nlohmann::json j = decode_control(payload_of(f));
  EXPECT_EQ(j["type"], "run");
  EXPECT_EQ(j["model_id"], 3);
}

TEST(AdapterFrames, TensorsRoundTripContiguousWhateverTheirLayout) {
  at::Tensor t = at::arange(12, at::kFloat).reshape({3, 4}).t();  // strided
  std::string f = encode_tensor(t);
  EXPECT_EQ(decode_frame_header(f.substr(0, kFrameHeaderSize)).kind, 'T');
  at::Tensor back = decode_tensor(payload_of(f));
  EXPECT_EQ(back.sizes(), t.sizes());
  EXPECT_TRUE(back.is_contiguous());
  EXPECT_TRUE(at::equal(back, t));
  at::Tensor i = at::arange(5, at::kLong);
  EXPECT_TRUE(at::equal(decode_tensor(payload_of(encode_tensor(i))), i));
}

TEST(AdapterFrames, BadHeadersSayWhatWasWrong) {
  EXPECT_NE(error_of([] { decode_frame_header("Hello, world!!!!"); }).find("expected the magic GBAD, got 'Hell'"), std::string::npos);
  std::string h = encode_frame_header({'J', 4});
  h[4] = 'X';
  EXPECT_NE(error_of([&] { decode_frame_header(h); }).find("unknown kind 'X'"), std::string::npos);
  EXPECT_NE(error_of([] { decode_frame_header("GBAD"); }).find("16 bytes, got 4"), std::string::npos);
  EXPECT_NE(error_of([] { decode_control("[1, 2]"); }).find("not an object"), std::string::npos);
  EXPECT_NE(error_of([] { decode_control("{\"type\": "); }).find("not JSON"), std::string::npos);
}

TEST(AdapterFrames, ATensorWhoseBytesDoNotMatchItsHeaderIsRejected) {
  std::string p = payload_of(encode_tensor(at::arange(6, at::kFloat)));
  EXPECT_NE(error_of([&] { decode_tensor(p.substr(0, p.size() - 4)); }).find("float32[6] needs 24 bytes, the frame holds 20"),
            std::string::npos);
  std::string bad_dtype = p;
  bad_dtype.replace(bad_dtype.find("float32"), 7, "float99");
  EXPECT_NE(error_of([&] { decode_tensor(bad_dtype); }).find("unknown dtype 'float99'"), std::string::npos);
  EXPECT_NE(error_of([] { decode_tensor("ab"); }).find("no meta length"), std::string::npos);
}

}  // namespace
}  // namespace gbc
