// retype_graph (compiler/ir/retype.h): new input dtypes flow through every node, nested `if`
// blocks included, and a node that does not accept them fails with inference's own message.
#include "compiler/ir/retype.h"

#include <gtest/gtest.h>

#include "compiler/ir/infer.h"

namespace gbc {
namespace {

class RetypeTest : public ::testing::Test {
 protected:
  ValueId input(const char* name, DType dtype, SymShape shape) {
    ValueId v = g_.add_value(name, ValueType::tensor(dtype, std::move(shape)));
    g_.inputs.push_back({v, GraphInput::Role::Input});
    return v;
  }
  // Appends `op(args)` to `block` and infers it, as the frontend does.
  ValueId node(Block& block, const std::string& op, std::vector<ValueId> args) {
    Node n;
    n.op = op;
    for (ValueId a : args) n.args.push_back(Arg::of(a));
    n.outputs = {g_.add_value(op + std::to_string(g_.values.size()), ValueType{})};
    Diagnostics d;
    EXPECT_TRUE(infer_node_types(g_, n, d)) << d.str();
    block.nodes.push_back(n);
    return n.output();
  }

  Graph g_;
};

TEST_F(RetypeTest, NewInputDtypesReachEveryResult) {
  ValueId x = input("x", DType::Float32, {4, 3});
  ValueId y = input("y", DType::Float32, {3});
  ValueId sum = node(g_.body, "add", {x, y});
  ValueId e = node(g_.body, "exp", {sum});
  ASSERT_EQ(g_.type(e).str(), "float32[4, 3]");

  Diagnostics d;
  ASSERT_TRUE(retype_graph(g_, {{x, DType::Float64}, {y, DType::Float64}}, d)) << d.str();
  EXPECT_EQ(g_.type(sum).str(), "float64[4, 3]");
  EXPECT_EQ(g_.type(e).str(), "float64[4, 3]");

  // Mixed: promotion decides, as in eager (float64 with int32 is float64; int32 alone stays int).
  ASSERT_TRUE(retype_graph(g_, {{x, DType::Int32}, {y, DType::Int32}}, d)) << d.str();
  EXPECT_EQ(g_.type(sum).str(), "int32[4, 3]");
  EXPECT_EQ(g_.type(e).str(), "float32[4, 3]");
}

TEST_F(RetypeTest, NestedBlocksAreRetypedBeforeTheirNode) {
  ValueId x = input("x", DType::Float32, {3});
  ValueId c = input("c", DType::Bool, {});
  Node n;
  n.op = "if";
  n.args = {Arg::of(c)};
  n.blocks.resize(2);
  n.blocks[0].results = {node(n.blocks[0], "neg", {x})};
  n.blocks[1].results = {node(n.blocks[1], "abs", {x})};
  n.outputs = {g_.add_value("r", ValueType{})};
  Diagnostics d;
  ASSERT_TRUE(infer_node_types(g_, n, d)) << d.str();
  g_.body.nodes.push_back(n);
  ASSERT_EQ(g_.type(n.output()).str(), "float32[3]");

  ASSERT_TRUE(retype_graph(g_, {{x, DType::Float64}}, d)) << d.str();
  EXPECT_EQ(g_.type(n.output()).str(), "float64[3]");
}

TEST_F(RetypeTest, ANodeThatRejectsTheNewDtypesFails) {
  ValueId x = input("x", DType::Float32, {4, 3});
  ValueId w = input("w", DType::Float32, {3, 2});
  node(g_.body, "matmul", {x, w});
  Diagnostics d;
  EXPECT_FALSE(retype_graph(g_, {{x, DType::Float64}}, d));
  ASSERT_TRUE(d.has_errors());
  EXPECT_NE(d.str().find("matmul"), std::string::npos) << d.str();
}

}  // namespace
}  // namespace gbc
