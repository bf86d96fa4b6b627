#include "harness/model/model_writer.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/ir/printer.h"
#include "harness/model/model_loader.h"

namespace gbc {
namespace {

// Written and re-read, a model is the same program (locations aside).
void expect_round_trip(const Model& m) {
  std::string text = write_model_yaml(m);
  Model back;
  try {
    back = load_model_text(text, "written.yaml");
  } catch (const ModelError& e) {
    FAIL() << e.diagnostics().str() << "\n" << text;
  }
  PrintOptions no_loc;
  no_loc.locations = false;
  EXPECT_EQ(print_graph(back.graph, no_loc), print_graph(m.graph, no_loc)) << text;
  EXPECT_EQ(write_model_yaml(back), text);
}

TEST(ModelWriterTest, CorpusExamplesRoundTrip) {
  namespace fs = std::filesystem;
  for (const auto& e : fs::directory_iterator(fs::path(GBCHECK_SOURCE_DIR) / "corpus" / "examples"))
    if (e.path().extension() == ".yaml") expect_round_trip(load_model_file(e.path().string()));
}

// Found by libFuzzer: a backend name holding `]` was written unquoted into the flow list, and
// the written model did not load. The loader accepts unknown names; the check rejects them later.
TEST(ModelWriterTest, BackendAndOracleNamesAreQuotedWhenTheyNeedIt) {
  Model m = load_model_text(R"(format: gbcheck/v1
inputs:
  x: {shape: [4]}
graph:
  - {id: y, op: relu, args: [x]}
outputs: [y]
check:
  backends: ["nnc]", "a, b", gbc]
)",
                            "names.yaml");
  expect_round_trip(m);
  EXPECT_NE(write_model_yaml(m).find(R"(backends: ["nnc]", "a, b", gbc])"), std::string::npos) << write_model_yaml(m);
}

TEST(ModelWriterTest, ControlFlowInPlaceAndStringsRoundTrip) {
  expect_round_trip(load_model_text(R"(format: gbcheck/v1
dims: {B: [2, 5]}
inputs:
  x: {shape: [B, 3], dtype: float32, values: {dist: normal, mean: 1.5, std: 0.25}}
  m: {shape: [B, 3], dtype: bool, values: {dist: bernoulli, p: 0.3}}
graph:
  - {op: print, args: [x], message: "a: b, c"}
  - {op: add_, args: [x, .nan]}
  - {id: s, op: sum, args: [x]}
  - {id: p, op: gt, args: [s, -.inf]}
  - op: if
    args: [p]
    result: r
    then:
      - {id: r, op: where, args: [m, x, 0.5]}
    else:
      - {id: r, op: clamp, args: [x], min: -1, max: 2.0}
  - {id: q, op: reshape, args: [r], shape: [-1]}
  - {id: f, op: full, args: [], shape: [B, 3], value: 2, dtype: int8}
outputs: [q, f, x]
check: {seed: 3, backends: [nnc], tolerance: {float32: {rtol: 0.001, atol: 0.0001}}, expect: {fallbacks: 0}}
)",
                                    "m.yaml"));
}

}  // namespace
}  // namespace gbc
