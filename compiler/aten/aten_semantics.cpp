#include "compiler/aten/aten_semantics.h"

#include <ATen/ATen.h>

#include <functional>
#include <map>
#include <mutex>
#include <utility>

namespace gbc {
namespace {

float half(float v) { return static_cast<float>(c10::Half(v)); }

// One probe: x (a float16 tensor element) op s (a number), with values where rounding s to
// float16 first changes the float16 (or bool) result.
struct Probe {
  OpId op;
  float x, s;
  std::function<at::Tensor(const at::Tensor&, double)> aten;
  std::function<float(float, float)> math;  // in float32, the result then rounded to float16
  bool boolean = false;
};

AtenSemantics probe(c10::Device device) {
  const std::vector<Probe> probes = {
      {OpId::Add, -0.1001f, 0.1f, [](const at::Tensor& t, double s) { return t.add(s); }, [](float a, float b) { return a + b; }},
      {OpId::Sub, 0.1001f, 0.1f, [](const at::Tensor& t, double s) { return t.sub(s); }, [](float a, float b) { return a - b; }},
      {OpId::Mul, 1.5f, 0.1f, [](const at::Tensor& t, double s) { return t.mul(s); }, [](float a, float b) { return a * b; }},
      {OpId::Div, 1.5f, 0.1f, [](const at::Tensor& t, double s) { return t.div(s); }, [](float a, float b) { return a / b; }},
      {OpId::Eq, 0.1f, 0.1f, [](const at::Tensor& t, double s) { return t.eq(s); }, [](float a, float b) { return float(a == b); }, true},
      {OpId::Ne, 0.1f, 0.1f, [](const at::Tensor& t, double s) { return t.ne(s); }, [](float a, float b) { return float(a != b); }, true},
      {OpId::Lt, 0.1f, 0.1f, [](const at::Tensor& t, double s) { return t.lt(s); }, [](float a, float b) { return float(a < b); }, true},
      {OpId::Le, 0.1001f, 0.1f, [](const at::Tensor& t, double s) { return t.le(s); }, [](float a, float b) { return float(a <= b); }, true},
      {OpId::Gt, 0.1001f, 0.1f, [](const at::Tensor& t, double s) { return t.gt(s); }, [](float a, float b) { return float(a > b); }, true},
      {OpId::Ge, 0.1f, 0.1f, [](const at::Tensor& t, double s) { return t.ge(s); }, [](float a, float b) { return float(a >= b); }, true},
  };
  AtenSemantics semantics;
  for (const Probe& p : probes) {
    const at::Tensor x = at::full({1}, p.x, at::TensorOptions().dtype(at::kHalf).device(device));
    const float got = p.aten(x, p.s).to(at::kFloat).cpu().item<float>();
    const float hx = half(p.x);
    const float kept = p.boolean ? p.math(hx, p.s) : half(p.math(hx, p.s));
    const float rounded = p.boolean ? p.math(hx, half(p.s)) : half(p.math(hx, half(p.s)));
    if (got == kept && kept != rounded) semantics.half_numbers_in_float32.insert(p.op);
  }
  return semantics;
}

}  // namespace

const AtenSemantics& aten_semantics(c10::Device device) {
  static std::mutex mutex;
  static std::map<c10::DeviceType, AtenSemantics> probed;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = probed.find(device.type());
  if (it == probed.end()) {
    AtenSemantics found;
    try {
      found = probe(device);
    } catch (const c10::Error&) {
      // No such device in this process (CUDA plans compiled and interpreted on a CPU-only
      // machine): the kernels run on CPU tensors, so the CPU's semantics are the ones to follow.
      found = probe(c10::Device(c10::kCPU));
    }
    it = probed.emplace(device.type(), std::move(found)).first;
  }
  return it->second;
}

}  // namespace gbc
