// --input and --dim as the importer reads them (harness/import/input_spec.h).
#include <gtest/gtest.h>

#include "compiler/ir/diagnostics.h"
#include "harness/import/input_spec.h"

namespace gbc {
namespace {

std::string error_of(const std::vector<std::string>& inputs, const std::vector<std::string>& dims) {
  try {
    parse_import_specs(inputs, dims);
  } catch (const ModelError& e) {
    return e.diagnostics().str();
  }
  return "";
}

TEST(InputSpec, NamesDtypesShapesAndDims) {
  ImportSpecs s = parse_import_specs({"x=float32[B, 3, 64, 64]", "int64[7]", "bool[]"}, {"B=1:8"});
  ASSERT_EQ(s.inputs.size(), 3u);
  EXPECT_EQ(s.inputs[0].name, "x");
  EXPECT_EQ(s.inputs[0].dtype, DType::Float32);
  EXPECT_EQ(shape_str(s.inputs[0].shape), "[B, 3, 64, 64]");
  EXPECT_EQ(s.inputs[1].name, "");
  EXPECT_EQ(shape_str(s.inputs[1].shape), "[7]");
  EXPECT_TRUE(s.inputs[2].shape.empty());
  ASSERT_NE(s.dims.range("B"), nullptr);
  EXPECT_EQ(s.dims.range("B")->min, 1);
  EXPECT_EQ(s.dims.range("B")->max, 8);
}

TEST(InputSpec, MistakesAreCommandLineErrors) {
  EXPECT_EQ(error_of({"x=float32"}, {}),
            "command line: error: --input 'x=float32': expected DTYPE[SHAPE]; hint: write --input [NAME=]DTYPE[SHAPE], "
            "e.g. --input x=float32[1,3,224,224]\n");
  EXPECT_EQ(error_of({"float32[N]"}, {}),
            "command line: error: --input 'float32[N]': dim 'N' is not declared; hint: declare it with --dim N=MIN:MAX\n");
  EXPECT_EQ(error_of({}, {"B=0:4"}),
            "command line: error: --dim 'B=0:4': the range must be two sizes with 1 <= MIN <= MAX; hint: write --dim "
            "NAME=MIN:MAX, e.g. --dim B=1:8\n");
  EXPECT_EQ(error_of({}, {"B"}), "command line: error: --dim 'B': expected NAME=MIN:MAX; hint: write --dim NAME=MIN:MAX, e.g. --dim B=1:8\n");
}

}  // namespace
}  // namespace gbc
