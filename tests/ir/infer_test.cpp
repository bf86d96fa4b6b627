// Type and shape inference (compiler/ir/infer.h) on graphs built in code: result dtypes follow
// ATen's promotion, shapes broadcast NumPy's way over symbolic dims, views and reductions compute
// their shapes, and arguments that do not fit give one error that names the op and the sizes,
// while arguments of unknown type (an earlier error) give none.
#include "compiler/ir/infer.h"

#include <gtest/gtest.h>

namespace gbc {
namespace {

DimExpr sym(const char* name) { return DimExpr::symbol(name); }

// A graph with dims B in [1, 32] and N in [2, 8]; each node is inferred as it is added.
class InferTest : public ::testing::Test {
 protected:
  InferTest() {
    g_.dims.declare("B", {1, 32});
    g_.dims.declare("N", {2, 8});
  }

  ValueId tensor(DType dtype, SymShape shape) {
    return g_.add_value("v" + std::to_string(g_.values.size()), ValueType::tensor(dtype, std::move(shape)));
  }
  ValueId unknown() { return g_.add_value("u" + std::to_string(g_.values.size()), ValueType{}); }

  /// The type of `op`'s result, "?" when inference failed (its message is in diags_).
  std::string infer_args(const std::string& op, std::vector<Arg> args, std::map<std::string, AttrValue> attrs = {}) {
    Node n;
    n.op = op_id(op);
    EXPECT_NE(n.op, OpId::Unknown) << op;
    n.args = std::move(args);
    n.attrs = std::move(attrs);
    n.outputs = {g_.add_value("out" + std::to_string(g_.values.size()), ValueType{})};
    const bool ok = infer_node_types(g_, n, diags_);
    const ValueType& t = g_.type(n.output());
    EXPECT_EQ(ok, t.known()) << op;
    last_ = t;
    return t.str();
  }
  std::string infer(const std::string& op, std::vector<ValueId> args, std::map<std::string, AttrValue> attrs = {}) {
    std::vector<Arg> a;
    for (ValueId v : args) a.push_back(Arg::of(v));
    return infer_args(op, std::move(a), std::move(attrs));
  }

  /// The one error inference reported since the last call, and clears it.
  std::string error() {
    const std::string s = diags_.str();
    EXPECT_TRUE(diags_.has_errors()) << "no error";
    diags_ = Diagnostics();
    return s;
  }

  Graph g_;
  Diagnostics diags_;
  ValueType last_;
};

TEST_F(InferTest, ElementwiseOpsBroadcastNumpysWay) {
  EXPECT_EQ(infer("add", {tensor(DType::Float32, {4, 1}), tensor(DType::Float32, {3})}), "float32[4, 3]");
  EXPECT_EQ(infer("mul", {tensor(DType::Float32, {2, 1, 5}), tensor(DType::Float32, {4, 1})}), "float32[2, 4, 5]");
  EXPECT_EQ(infer("tanh", {tensor(DType::Float32, {})}), "float32[]");
  EXPECT_EQ(infer("where", {tensor(DType::Bool, {4, 1}), tensor(DType::Float32, {1, 3}), tensor(DType::Float32, {3})}),
            "float32[4, 3]");
  EXPECT_FALSE(diags_.has_errors()) << diags_.str();
}

TEST_F(InferTest, SymbolicDimsBroadcastWhenEqualOrOneForEveryValue) {
  EXPECT_EQ(infer("add", {tensor(DType::Float32, {sym("B"), 1}), tensor(DType::Float32, {1, 64})}), "float32[B, 64]");
  EXPECT_EQ(infer("sub", {tensor(DType::Float32, {sym("N")}), tensor(DType::Float32, {sym("B"), sym("N")})}),
            "float32[B, N]");
  // N is never 1 and never 3: no binding makes [N] and [3] broadcast.
  EXPECT_EQ(infer("add", {tensor(DType::Float32, {sym("N")}), tensor(DType::Float32, {3})}), "?");
  EXPECT_NE(error().find("add: shapes [N] and [3] do not broadcast (N vs 3)"), std::string::npos);
  EXPECT_EQ(infer("add", {tensor(DType::Float32, {4}), tensor(DType::Float32, {3})}), "?");
  EXPECT_NE(error().find("(4 vs 3)"), std::string::npos);
}

TEST_F(InferTest, BroadcastShapesIsSymmetricAndNamesTheConflict) {
  std::string conflict;
  const SymShape a = {sym("B"), 1, 5}, b = {4, 1};
  auto ab = broadcast_shapes(g_.dims, a, b, &conflict);
  auto ba = broadcast_shapes(g_.dims, b, a, &conflict);
  ASSERT_TRUE(ab && ba);
  EXPECT_EQ(ValueType::tensor(DType::Float32, *ab).str(), "float32[B, 4, 5]");
  EXPECT_EQ(ValueType::tensor(DType::Float32, *ba).str(), "float32[B, 4, 5]");
  EXPECT_FALSE(broadcast_shapes(g_.dims, {2, 3}, {3, 2}, &conflict));
  EXPECT_EQ(conflict, "3 vs 2");
}

TEST_F(InferTest, DtypesPromoteAsATenDoes) {
  // Category first: a float operand wins over integers; within a category the wider dtype.
  EXPECT_EQ(infer("add", {tensor(DType::Int64, {2}), tensor(DType::Float16, {2})}), "float16[2]");
  EXPECT_EQ(infer("add", {tensor(DType::Bool, {2}), tensor(DType::Int8, {2})}), "int8[2]");
  EXPECT_EQ(infer("add", {tensor(DType::UInt8, {2}), tensor(DType::Int8, {2})}), "int16[2]");
  EXPECT_EQ(infer("add", {tensor(DType::Float16, {2}), tensor(DType::BFloat16, {2})}), "float32[2]");
  // A number only changes the category, to the default dtype; a 0-d tensor of the same category
  // does not widen a dimensioned one.
  EXPECT_EQ(infer_args("mul", {Arg::of(tensor(DType::Int32, {2})), Arg::number(Scalar::from_float(2.5))}), "float32[2]");
  EXPECT_EQ(infer_args("mul", {Arg::of(tensor(DType::Float16, {2})), Arg::number(Scalar::from_float(2.5))}), "float16[2]");
  EXPECT_EQ(infer("add", {tensor(DType::Float32, {2}), tensor(DType::Float64, {})}), "float32[2]");
  // Ops with their own rules: true division of integers, comparisons, sums of integers.
  EXPECT_EQ(infer("div", {tensor(DType::Int32, {2}), tensor(DType::Int32, {2})}), "float32[2]");
  EXPECT_EQ(infer("lt", {tensor(DType::Float64, {2}), tensor(DType::Float64, {2})}), "bool[2]");
  EXPECT_EQ(infer("sum", {tensor(DType::Int32, {2, 3})}), "int64[]");
  EXPECT_EQ(infer("to", {tensor(DType::Float32, {2, 3})}, {{"dtype", DType::BFloat16}}), "bfloat16[2, 3]");
  EXPECT_FALSE(diags_.has_errors()) << diags_.str();
}

TEST_F(InferTest, DtypeRulesRejectWhatATenRejects) {
  EXPECT_EQ(infer("sub", {tensor(DType::Bool, {2}), tensor(DType::Bool, {2})}), "?");
  EXPECT_NE(error().find("sub: subtraction with a bool operand is not supported"), std::string::npos);
  EXPECT_EQ(infer("mean", {tensor(DType::Int64, {2})}), "?");
  EXPECT_NE(error().find("mean: needs a floating-point tensor, got int64"), std::string::npos);
  EXPECT_EQ(infer("matmul", {tensor(DType::Float32, {2, 3}), tensor(DType::Float64, {3, 2})}), "?");
  EXPECT_NE(error().find("matmul: dtypes differ"), std::string::npos);
}

TEST_F(InferTest, ReductionsDropOrKeepTheirDims) {
  const ValueId x = tensor(DType::Float32, {sym("B"), 4, 6});
  EXPECT_EQ(infer("sum", {x}, {{"dim", int64_t{1}}}), "float32[B, 6]");
  EXPECT_EQ(infer("amax", {x}, {{"dim", std::vector<int64_t>{0, -1}}, {"keepdim", true}}), "float32[1, 4, 1]");
  EXPECT_EQ(infer("mean", {x}), "float32[]");
  EXPECT_EQ(infer("argmax", {x}, {{"dim", int64_t{2}}}), "int64[B, 4]");
  EXPECT_EQ(infer("softmax", {x}, {{"dim", int64_t{-1}}}), "float32[B, 4, 6]");
  EXPECT_FALSE(diags_.has_errors()) << diags_.str();
  EXPECT_EQ(infer("sum", {x}, {{"dim", std::vector<int64_t>{1, -2}}}), "?");
  EXPECT_NE(error().find("sum: dim -2 appears twice in [1, -2]"), std::string::npos);
  EXPECT_EQ(infer("sum", {x}, {{"dim", int64_t{3}}}), "?");
  EXPECT_NE(error().find("sum: dim 3 is out of range"), std::string::npos);
}

TEST_F(InferTest, MatmulFollowsTorchMatmulsRankCases) {
  EXPECT_EQ(infer("matmul", {tensor(DType::Float32, {sym("B"), 64}), tensor(DType::Float32, {64, 32})}),
            "float32[B, 32]");
  EXPECT_EQ(infer("matmul", {tensor(DType::Float32, {5}), tensor(DType::Float32, {5})}), "float32[]");
  EXPECT_EQ(infer("matmul", {tensor(DType::Float32, {3, 1, 4, 5}), tensor(DType::Float32, {2, 5, 6})}),
            "float32[3, 2, 4, 6]");
  EXPECT_EQ(infer("linear", {tensor(DType::Float32, {sym("B"), 7, 16}), tensor(DType::Float32, {8, 16})}),
            "float32[B, 7, 8]");
  EXPECT_EQ(infer("bmm", {tensor(DType::Float32, {sym("B"), 2, 3}), tensor(DType::Float32, {sym("B"), 3, 4})}),
            "float32[B, 2, 4]");
  EXPECT_FALSE(diags_.has_errors()) << diags_.str();
  EXPECT_EQ(infer("matmul", {tensor(DType::Float32, {4, 64}), tensor(DType::Float32, {48, 8})}), "?");
  EXPECT_NE(error().find("matmul: inner dimensions differ (64 vs 48)"), std::string::npos);
  // N is in [2, 8]: equal to 4 only for some values, which is not enough.
  EXPECT_EQ(infer("matmul", {tensor(DType::Float32, {2, sym("N")}), tensor(DType::Float32, {4, 3})}), "?");
  EXPECT_NE(error().find("(N vs 4, equal only for some dim values)"), std::string::npos);
}

TEST_F(InferTest, ViewsComputeTheirShapes) {
  const ValueId x = tensor(DType::Float16, {4, 6});
  EXPECT_EQ(infer("reshape", {x}, {{"shape", SymShape{-1, 3}}}), "float16[8, 3]");
  EXPECT_EQ(infer("permute", {tensor(DType::Float32, {2, 3, 4})}, {{"dims", std::vector<int64_t>{2, 0, 1}}}),
            "float32[4, 2, 3]");
  EXPECT_EQ(infer("transpose", {x}, {{"dim0", int64_t{0}}, {"dim1", int64_t{1}}}), "float16[6, 4]");
  EXPECT_EQ(infer("unsqueeze", {x}, {{"dim", int64_t{-1}}}), "float16[4, 6, 1]");
  EXPECT_EQ(infer("expand", {tensor(DType::Float32, {1, 6})}, {{"size", SymShape{3, 4, -1}}}), "float32[3, 4, 6]");
  EXPECT_EQ(infer("cat", {tensor(DType::Float32, {2, sym("B")}), tensor(DType::Float32, {5, sym("B")})},
                  {{"dim", int64_t{0}}}),
            "float32[7, B]");
  // A symbolic reshape keeps the element count for every value of B.
  infer("reshape", {tensor(DType::Float32, {sym("B"), 6})}, {{"shape", SymShape{-1, 2}}});
  ASSERT_TRUE(last_.known()) << diags_.str();
  EXPECT_EQ(g_.dims.equal(last_.shape[0], sym("B") * 3), Truth::Always) << last_.str();
  EXPECT_FALSE(diags_.has_errors()) << diags_.str();

  EXPECT_EQ(infer("reshape", {x}, {{"shape", SymShape{5, -1}}}), "?");
  EXPECT_NE(error().find("reshape: shape [5, -1] cannot hold 24 elements"), std::string::npos);
  EXPECT_EQ(infer("permute", {x}, {{"dims", std::vector<int64_t>{0, 0}}}), "?");
  EXPECT_NE(error().find("permute: dims [0, 0] is not a permutation (dim 0 twice)"), std::string::npos);
  EXPECT_EQ(infer("expand", {x}, {{"size", SymShape{4, 7}}}), "?");
  EXPECT_NE(error().find("expand: cannot expand dim 1 of size 6 to 7"), std::string::npos);
}

TEST_F(InferTest, ArgumentsOfUnknownTypeGiveNoFurtherError) {
  EXPECT_EQ(infer("add", {unknown(), tensor(DType::Float32, {3})}), "?");
  EXPECT_EQ(infer("matmul", {tensor(DType::Float32, {4, 64}), unknown()}), "?");
  EXPECT_FALSE(diags_.has_errors()) << diags_.str();
}

TEST_F(InferTest, NumbersOnlyWhereATenTakesAScalar) {
  EXPECT_EQ(infer_args("add", {Arg::number(Scalar::from_int(1)), Arg::number(Scalar::from_int(2))}), "?");
  EXPECT_NE(error().find("add: needs at least one tensor operand, got two numbers"), std::string::npos);
  EXPECT_EQ(infer_args("matmul", {Arg::of(tensor(DType::Float32, {2, 2})), Arg::number(Scalar::from_float(2.5))}), "?");
  const std::string message = error();
  EXPECT_NE(message.find("matmul: argument 2 (2.5) must be a tensor"), std::string::npos) << message;
}

TEST(NormalizeDim, CountsNegativeDimsFromTheEnd) {
  EXPECT_EQ(normalize_dim(-1, 3), 2);
  EXPECT_EQ(normalize_dim(2, 3), 2);
  EXPECT_EQ(normalize_dim(3, 3), std::nullopt);
  EXPECT_EQ(normalize_dim(-4, 3), std::nullopt);
  EXPECT_EQ(normalize_dim(-1, 0), 0);  // a 0-d tensor takes dim 0 and -1
}

}  // namespace
}  // namespace gbc
