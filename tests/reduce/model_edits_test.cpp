// Tests of the reducer's model edits (harness/reduce/model_edits.h): removing nodes by a new input
// holding the real value or by bypassing, dead code, dims and literal sizes, dtypes, and that
// every edited model rebuilds into a valid model.
#include "harness/reduce/model_edits.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "harness/model/model_loader.h"

namespace gbc {
namespace {

ReductionSubject subject(const std::string& text) {
  ReductionSubject s;
  s.model = load_model_text(text, "edit.yaml");
  int k = 0;
  for (const TensorSpec* spec : s.model.all_tensor_specs()) {
    std::vector<int64_t> sizes;
    for (const DimExpr& d : spec->shape) sizes.push_back(d.is_const() ? d.value() : s.model.graph.dims.range(d.name())->max);
    s.values[spec->name] = at::arange(1, 1 + at::ones(sizes).numel(), at::kFloat).reshape(sizes) + k++;
  }
  pin_dims(s);
  s.model = rebuild(s.model);
  return s;
}

const char* kChain =
    "format: gbcheck/v1\ndims: {B: [1, 4]}\ninputs:\n  x: {shape: [B, 6], dtype: float32}\n"
    "params:\n  w: {shape: [6], dtype: float32}\ngraph:\n"
    "  - {id: a, op: add, args: [x, w]}\n  - {id: b, op: sin, args: [a]}\n  - {id: c, op: sum, args: [b], dim: 1}\n"
    "  - {id: d, op: neg, args: [c]}\noutputs: [d]\n";

size_t index_of(const Model& m, const std::string& op) {
  for (size_t i = 0; i < m.graph.body.nodes.size(); ++i)
    if (m.graph.body.nodes[i].op == op_id(op)) return i;
  ADD_FAILURE() << "no " << op;
  return 0;
}

TEST(ModelEdits, PinsDimsToTheFailingSizes) {
  ReductionSubject s = subject(kChain);
  const DimRange* b = s.model.graph.dims.range("B");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->min, 4);
  EXPECT_EQ(b->max, 4);
}

TEST(ModelEdits, RemovingANodeFeedsItsUsersTheRealValue) {
  ReductionSubject s = subject(kChain);
  auto ev = eager_values(s);
  const ValueId a = *s.model.graph.find_value("a");
  ASSERT_TRUE(remove_nodes(s, {index_of(s.model, "add")}, ev));
  s.model = rebuild(s.model);
  // `a` is now an input holding add's value; x and w are no longer read and are gone.
  ASSERT_EQ(s.model.inputs.size(), 1u);
  EXPECT_EQ(s.model.inputs[0].name, "a");
  EXPECT_TRUE(s.model.params.empty());
  EXPECT_EQ(s.values.count("x"), 0u);
  EXPECT_TRUE(at::equal(s.values.at("a"), ev.at(a)));
  EXPECT_EQ(shape_str(s.model.inputs[0].shape), "[B, 6]");  // symbolic, so halving B slices it
  EXPECT_EQ(s.node_count(), 3);
}

// A case of a model's second dtype variant (float64 inputs): the value promoted to an input is
// float64 there and float32 in the first variant, and its declaration says both, so the failing
// case's values replay with --inputs and the check runs the variant the failure came from.
TEST(ModelEdits, AValueMadeAnInputDeclaresItsDtypeInEveryVariant) {
  ReductionSubject s;
  s.model = load_model_text(
      "format: gbcheck/v1\ninputs:\n  x: {shape: [4], dtypes: [float32, float64]}\n"
      "  y: {shape: [4], dtypes: [float32, float64]}\ngraph:\n"
      "  - {id: a, op: add, args: [x, y]}\n  - {id: m, op: gt, args: [a, 0.5]}\n"
      "  - {id: b, op: where, args: [m, a, y]}\noutputs: [b]\n",
      "edit.yaml");
  s.values["x"] = at::arange(4, at::kDouble);
  s.values["y"] = at::arange(4, at::kDouble) * 0.5;
  auto ev = eager_values(s);
  ASSERT_TRUE(remove_nodes(s, {index_of(s.model, "add"), index_of(s.model, "gt")}, ev));
  s.model = rebuild(s.model);
  const TensorSpec* a = s.model.find_spec("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, DType::Float32);
  EXPECT_EQ(a->dtypes, (std::vector<DType>{DType::Float32, DType::Float64}));
  EXPECT_EQ(s.values.at("a").scalar_type(), at::kDouble);
  // A bool value is bool in both variants: no list.
  const TensorSpec* m = s.model.find_spec("m");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->dtype, DType::Bool);
  EXPECT_TRUE(m->dtypes.empty());
}

TEST(ModelEdits, RemovingAnOutputsProducerBypassesItWhenTypesFit) {
  ReductionSubject s = subject(kChain);
  ASSERT_TRUE(remove_nodes(s, {index_of(s.model, "neg")}, eager_values(s)));
  s.model = rebuild(s.model);
  EXPECT_EQ(s.model.graph.name_of(s.model.graph.outputs.at(0)), "c");
  EXPECT_EQ(s.node_count(), 3);
  EXPECT_EQ(s.model.inputs.size(), 1u);  // no new input: the output reads sum's value
}

TEST(ModelEdits, DeadCodeAndUnusedInputsGoWithAnOutput) {
  ReductionSubject s = subject(
      "format: gbcheck/v1\ninputs:\n  x: {shape: [3]}\n  y: {shape: [3]}\ngraph:\n"
      "  - {id: a, op: sin, args: [x]}\n  - {id: b, op: cos, args: [y]}\noutputs: [a, b]\n");
  set_outputs(s, {s.model.graph.outputs[0]});
  s.model = rebuild(s.model);
  EXPECT_EQ(s.node_count(), 1);
  ASSERT_EQ(s.model.inputs.size(), 1u);
  EXPECT_EQ(s.model.inputs[0].name, "x");
  EXPECT_EQ(s.inputs().size(), 1u);
}

TEST(ModelEdits, HalvingADimSlicesEveryInputAlongIt) {
  ReductionSubject s = subject(kChain);
  ASSERT_TRUE(halve_dim(s, "B"));
  s.model = rebuild(s.model);
  EXPECT_EQ(s.model.graph.dims.range("B")->min, 2);
  EXPECT_EQ(s.values.at("x").sizes().vec(), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(s.values.at("x")[1][0].item<float>(), 7.0f);  // the first rows, kept as they were
  EXPECT_FALSE(halve_dim(s, "no_such_dim"));
  ASSERT_TRUE(halve_dim(s, "B", Half::Upper));
  EXPECT_EQ(s.values.at("x").sizes().vec(), (std::vector<int64_t>{1, 6}));
  EXPECT_EQ(s.values.at("x")[0][0].item<float>(), 7.0f);  // the second of the two rows left
}

TEST(ModelEdits, HalvingALiteralSizeKeepsInputsConsistent) {
  ReductionSubject s = subject(kChain);
  EXPECT_EQ(literal_sizes(s.model), (std::vector<int64_t>{6}));
  ASSERT_TRUE(halve_literal_size(s, 6));
  s.model = rebuild(s.model);  // x[B, 3] + w[3] still broadcasts
  EXPECT_EQ(s.values.at("w").sizes().vec(), (std::vector<int64_t>{3}));
  EXPECT_EQ(s.values.at("x").sizes().vec(), (std::vector<int64_t>{4, 3}));
}

TEST(ModelEdits, SimplifiesDtypesAndValues) {
  EXPECT_EQ(simpler_dtype(DType::Float16), DType::Float32);
  EXPECT_EQ(simpler_dtype(DType::Int8), DType::Int64);
  EXPECT_FALSE(simpler_dtype(DType::Float32).has_value());
  EXPECT_FALSE(simpler_dtype(DType::Bool).has_value());
  ReductionSubject s = subject(kChain);
  set_input_dtype(s, "x", DType::Float64);
  EXPECT_EQ(s.values.at("x").scalar_type(), at::kDouble);
  Model rebuilt = rebuild(s.model);
  EXPECT_EQ(rebuilt.inputs[0].dtype, DType::Float64);
  EXPECT_EQ(rebuilt.graph.type(rebuilt.graph.outputs[0]).dtype, DType::Float64);  // promoted through the graph
}

TEST(ModelEdits, SimplerAttributesAndNumbersGoTowardZeroAndOne) {
  EXPECT_EQ(simpler_attrs(AttrValue{int64_t{3}}).size(), 2u);
  EXPECT_EQ(simpler_attrs(AttrValue{int64_t{1}}).size(), 1u);
  EXPECT_EQ(simpler_attrs(AttrValue{true}).size(), 1u);
  EXPECT_TRUE(simpler_attrs(AttrValue{false}).empty());
  EXPECT_TRUE(simpler_attrs(AttrValue{int64_t{0}}).empty());  // never back from 0 to 1
  EXPECT_TRUE(simpler_scalars(Scalar::from_float(0.0)).empty());
  ASSERT_EQ(simpler_scalars(Scalar::from_int(1)).size(), 1u);
  EXPECT_EQ(simpler_scalars(Scalar::from_int(1))[0].i, 0);
  std::vector<Scalar> s = simpler_scalars(Scalar::from_float(0.75));
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].f, 0.0);
  EXPECT_EQ(s[1].f, 1.0);
  EXPECT_EQ(constant_value(at::full({2, 3}, 2.5)), 2.5);
  EXPECT_FALSE(constant_value(at::arange(3)).has_value());
  EXPECT_FALSE(constant_value(at::full({2}, std::nan(""))).has_value());
}

}  // namespace
}  // namespace gbc
