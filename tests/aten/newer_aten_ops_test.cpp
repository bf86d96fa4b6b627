// The operators of PyTorch 2.x that gbcheck adds to an older LibTorch (compiler/aten/newer_aten_ops.h),
// called through the dispatcher as TorchScript and the generic op call them: each against its
// definition written out with plain ATen ops, and on meta tensors (the generic op's shape
// inference). On a LibTorch that has them natively, the same checks hold for its own kernels.
#include <gtest/gtest.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <ATen/ops/allclose.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/zeros.h>

#include <cmath>
#include <limits>

#include "compiler/aten/newer_aten_ops.h"

namespace gbc {
namespace {

c10::IValue call(const char* name, const char* overload, std::vector<c10::IValue> args) {
  register_newer_aten_ops();
  auto op = c10::Dispatcher::singleton().findSchema({name, overload});
  EXPECT_TRUE(op.has_value()) << name << "." << overload;
  if (!op) return {};
  // The schema's defaults fill the arguments not given, as TorchScript's call does.
  const auto& schema = op->schema();
  for (size_t i = args.size(); i < schema.arguments().size(); ++i) args.push_back(*schema.arguments()[i].default_value());
  torch::jit::Stack stack(args.begin(), args.end());
  op->callBoxed(&stack);
  return stack.back();
}

constexpr double kInf = std::numeric_limits<double>::infinity();

at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const at::Tensor& bias, double scale) {
  return at::matmul(at::softmax(at::matmul(q, k.transpose(-2, -1)) * scale + bias, -1), v);
}

TEST(NewerAtenOps, AreRegisteredExactlyWhereThisLibTorchLacksThem) {
  register_newer_aten_ops();
  for (const char* name : {"aten::scaled_dot_product_attention", "aten::rms_norm"})
    EXPECT_TRUE(c10::Dispatcher::singleton().findSchema({name, ""}).has_value()) << name;
  for (const std::string& name : newer_aten_ops_registered()) EXPECT_EQ(name.rfind("aten::", 0), 0u) << name;
  register_newer_aten_ops();  // a second call registers nothing twice (the dispatcher would abort)
}

TEST(NewerAtenOps, ScaledDotProductAttentionIsSoftmaxOfScaledScores) {
  at::Tensor q = at::randn({2, 3, 5, 8}), k = at::randn({2, 3, 6, 8}), v = at::randn({2, 3, 6, 4});
  const double scale = 1.0 / std::sqrt(8.0);
  at::Tensor plain = call("aten::scaled_dot_product_attention", "", {q, k, v}).toTensor();
  EXPECT_TRUE(at::allclose(plain, attention(q, k, v, at::zeros({5, 6}), scale), 0, 1e-6));

  // Causal: key j is seen by query i only where j <= i.
  at::Tensor causal_bias = at::zeros({5, 6});
  for (int i = 0; i < 5; ++i)
    for (int j = i + 1; j < 6; ++j) causal_bias[i][j] = -kInf;
  at::Tensor causal = call("aten::scaled_dot_product_attention", "", {q, k, v, c10::IValue(), 0.0, true}).toTensor();
  EXPECT_TRUE(at::allclose(causal, attention(q, k, v, causal_bias, scale), 0, 1e-6));

  // A boolean mask is -inf where false; an explicit scale replaces 1/sqrt(E); a fully masked row is zeros.
  at::Tensor keep = at::ones({5, 6}, at::kBool);
  keep[1][2] = false;
  keep[3] = false;
  at::Tensor bias = at::zeros({5, 6});
  bias[1][2] = -kInf;
  at::Tensor masked = call("aten::scaled_dot_product_attention", "", {q, k, v, keep, 0.0, false, 0.5, false}).toTensor();
  at::Tensor want = attention(q, k, v, bias, 0.5);
  for (int i : {0, 1, 2, 4}) EXPECT_TRUE(at::allclose(masked.select(2, i), want.select(2, i), 0, 1e-6)) << "row " << i;
  EXPECT_TRUE(masked.select(2, 3).eq(0).all().item<bool>()) << masked.select(2, 3);

  // Grouped-query heads: one key/value head serves all three query heads.
  at::Tensor gqa = call("aten::scaled_dot_product_attention", "",
                        {q, k.narrow(1, 0, 1), v.narrow(1, 0, 1), c10::IValue(), 0.0, false, c10::IValue(), true})
                       .toTensor();
  EXPECT_TRUE(at::allclose(gqa, attention(q, k.narrow(1, 0, 1).expand_as(k), v.narrow(1, 0, 1).expand_as(v), at::zeros({5, 6}), scale),
                           0, 1e-6));
}

TEST(NewerAtenOps, RmsNormScalesByTheRootMeanSquare) {
  at::Tensor x = at::randn({3, 4, 8}), w = at::randn({4, 8});
  at::Tensor want = x * at::rsqrt(x.pow(2).mean({1, 2}, true) + 1e-5) * w;
  at::Tensor got = call("aten::rms_norm", "", {x, std::vector<int64_t>{4, 8}, w, 1e-5}).toTensor();
  EXPECT_TRUE(at::allclose(got, want, 1e-6, 1e-6));
  // No eps: the dtype's epsilon; half computes in float and casts back.
  at::Tensor h = x.to(at::kHalf);
  at::Tensor half = call("aten::rms_norm", "", {h, std::vector<int64_t>{8}}).toTensor();
  EXPECT_EQ(half.scalar_type(), at::kHalf);
  at::Tensor f = h.to(at::kFloat);
  EXPECT_TRUE(half.equal((f * at::rsqrt(f.pow(2).mean({2}, true) + std::numeric_limits<float>::epsilon())).to(at::kHalf)));
}

TEST(NewerAtenOps, SqueezeAllAndAnyOverSeveralDims) {
  at::Tensor x = at::randn({2, 1, 3, 1});
  EXPECT_EQ(call("aten::squeeze", "dims", {x, std::vector<int64_t>{1, -1, 2}}).toTensor().sizes(), (at::IntArrayRef{2, 3}));
  at::Tensor b = x.gt(-1.0);
  at::Tensor all = call("aten::all", "dims", {b, std::vector<int64_t>{0, 2}, false}).toTensor();
  EXPECT_TRUE(all.equal(b.all(2).all(0)));
  at::Tensor any = call("aten::any", "dims", {b, std::vector<int64_t>{0, 2}, true}).toTensor();
  EXPECT_EQ(any.sizes(), (at::IntArrayRef{1, 1, 1, 1}));
  EXPECT_TRUE(any.equal(b.any(2, true).any(0, true)));
  EXPECT_EQ(call("aten::all", "dims", {b}).toTensor().dim(), 0);  // no dims: all of them
}

TEST(NewerAtenOps, RunOnMetaTensorsForShapeInference) {
  const auto meta = at::TensorOptions().device(c10::kMeta);
  at::Tensor q = at::empty({2, 4, 7, 8}, meta), k = at::empty({2, 2, 9, 8}, meta), v = at::empty({2, 2, 9, 3}, meta);
  at::Tensor out =
      call("aten::scaled_dot_product_attention", "", {q, k, v, c10::IValue(), 0.0, false, c10::IValue(), true}).toTensor();
  EXPECT_TRUE(out.is_meta());
  EXPECT_EQ(out.sizes(), (at::IntArrayRef{2, 4, 7, 3}));
  at::Tensor keep = at::empty({7, 9}, meta.dtype(at::kBool));
  EXPECT_EQ(call("aten::scaled_dot_product_attention", "", {q, k.repeat({1, 2, 1, 1}), v.repeat({1, 2, 1, 1}), keep}).toTensor().sizes(),
            (at::IntArrayRef{2, 4, 7, 3}));
  EXPECT_EQ(call("aten::scaled_dot_product_attention", "", {q, q, q, c10::IValue(), 0.0, true}).toTensor().sizes(), q.sizes());
  EXPECT_EQ(call("aten::rms_norm", "", {at::empty({5, 6}, meta), std::vector<int64_t>{6}}).toTensor().sizes(),
            (at::IntArrayRef{5, 6}));
}

}  // namespace
}  // namespace gbc
