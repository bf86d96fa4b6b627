#include "compiler/aten/aten_semantics.h"

#include <ATen/ATen.h>

#include <map>
#include <mutex>

namespace gbc {
namespace {

AtenSemantics probe(c10::Device device) {
  AtenSemantics s;
  // 1.5 * 0.1 in float16: 0.1500244140625 with 0.1 kept in float32, 0.14990234375 with 0.1 rounded
  // to float16 (0.0999755859375) first.
  const at::Tensor x = at::full({1}, 1.5, at::TensorOptions().dtype(at::kHalf).device(device));
  const float got = x.mul(0.1).to(at::kFloat).cpu().item<float>();
  s.half_numbers_in_float32 = got == static_cast<float>(c10::Half(1.5f * 0.1f));
  return s;
}

}  // namespace

const AtenSemantics& aten_semantics(c10::Device device) {
  static std::mutex mutex;
  static std::map<c10::DeviceType, AtenSemantics> probed;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = probed.find(device.type());
  if (it == probed.end()) it = probed.emplace(device.type(), probe(device)).first;
  return it->second;
}

}  // namespace gbc
