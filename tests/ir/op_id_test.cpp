#include "compiler/ir/op_id.h"

#include <gtest/gtest.h>

#include "compiler/ir/graph.h"
#include "compiler/ir/op_schema.h"

namespace gbc {
namespace {

TEST(OpIdTest, EverySchemaOpHasItsOwnId) {
  // Building the table checks op_id.h against it; here each op also parses back to its schema.
  ASSERT_EQ(all_op_schemas().size(), kOpIdCount);
  for (const auto& schema : all_op_schemas()) {
    EXPECT_EQ(op_id(schema.name), schema.id) << schema.name;
    EXPECT_EQ(op_name(schema.id), schema.name);
    EXPECT_EQ(&op_schema(schema.id), &schema) << schema.name;
  }
}

TEST(OpIdTest, NamesParseToTheirIds) {
  EXPECT_EQ(op_id("var"), OpId::Var);
  EXPECT_EQ(op_id("log_softmax"), OpId::LogSoftmax);
  EXPECT_EQ(op_id("add_"), OpId::AddInPlace);
  EXPECT_EQ(op_id("aten"), OpId::Generic);
  EXPECT_EQ(op_id("custom"), OpId::Custom);
  EXPECT_EQ(op_name(OpId::MaxPool2d), "max_pool2d");
}

TEST(OpIdTest, OtherWordsAreUnknownNotACrash) {
  EXPECT_EQ(op_id("softmx"), OpId::Unknown);
  EXPECT_EQ(op_id(""), OpId::Unknown);
  EXPECT_EQ(op_id("Add"), OpId::Unknown);
  EXPECT_EQ(op_name(OpId::Unknown), "?");
  EXPECT_EQ(find_op_schema(op_name(OpId::Unknown)), nullptr);
}

TEST(OpIdTest, ADefaultOpIdIsUnknownNotARealOp) {
  EXPECT_EQ(OpId{}, OpId::Unknown);
  EXPECT_EQ(Node{}.op, OpId::Unknown);
  EXPECT_EQ(find_op_schema(OpId{}), nullptr);
}

}  // namespace
}  // namespace gbc
