// Weights files (harness/model/weights_file.h): the safetensors layout written and read back, and
// model.yaml's `values: {file, tensor}` errors at their file:line:col.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "harness/model/model_loader.h"
#include "harness/model/weights_file.h"
#include "tests/support/temp_dir.h"

namespace gbc {
namespace {

TensorSpec param(const std::string& name, std::vector<float> values) {
  TensorSpec p;
  p.name = name;
  p.is_param = true;
  p.shape = {static_cast<int64_t>(values.size())};
  auto bytes = std::make_shared<std::string>(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  p.weights = WeightValues{"w.safetensors", name, bytes, 0, bytes->size()};
  return p;
}

const char* kModel =
    "format: gbcheck/v1\n"
    "inputs:\n  x: {shape: [3], dtype: float32}\n"
    "params:\n  b: {shape: [3], dtype: float32, values: {file: w.safetensors, tensor: b}}\n"
    "graph:\n  - {id: y, op: add, args: [x, b]}\noutputs: [y]\n";

std::string load_error(const std::string& path) {
  try {
    load_model_file(path);
  } catch (const ModelError& e) {
    return e.diagnostics().str();
  }
  return "";
}

TEST(WeightsFile, WritesTheSafetensorsLayoutAndReadsItBack) {
  testing::TempDir tmp("weights-file");
  std::string why;
  ASSERT_TRUE(write_weights_file(tmp.path("w.safetensors"), {param("b", {1, 2, 3}), param("a", {4})}, &why)) << why;
  auto file = read_weights_file(tmp.path("w.safetensors"), &why);
  ASSERT_TRUE(file) << why;
  ASSERT_EQ(file->tensors.size(), 2u);
  const WeightsEntry& b = file->tensors.at("b");
  EXPECT_EQ(b.dtype, DType::Float32);
  EXPECT_EQ(b.shape, std::vector<int64_t>{3});
  float got[3];
  std::memcpy(got, file->bytes->data() + b.offset, sizeof got);
  EXPECT_EQ(got[2], 3.0f);
  EXPECT_EQ(b.offset % 8, 0u);  // the header is padded: the data (b first) starts 8-byte aligned
}

TEST(WeightsFile, ModelLoadsItsParamsFromTheFile) {
  testing::TempDir tmp("weights-model");
  std::string why;
  ASSERT_TRUE(write_weights_file(tmp.path("w.safetensors"), {param("b", {1, 2, 3})}, &why)) << why;
  const std::string model = tmp.file("model.yaml", kModel);
  Model m = load_model_file(model);
  ASSERT_TRUE(m.params[0].weights);
  EXPECT_EQ(m.params[0].weights->size, 12u);
}

TEST(WeightsFile, MissingTruncatedOrMismatchedIsAnErrorAtTheValuesEntry) {
  testing::TempDir tmp("weights-errors");
  const std::string model = tmp.file("model.yaml", kModel);
  EXPECT_EQ(load_error(model), model + ":5:50: error: b.values: cannot read the weights file '" + tmp.path("w.safetensors") +
                                   "'; hint: write it again with gbcheck import\n");
  std::string why;
  ASSERT_TRUE(write_weights_file(tmp.path("w.safetensors"), {param("b", {1, 2})}, &why)) << why;
  EXPECT_EQ(load_error(model), model + ":5:73: error: b.values: tensor 'b' in w.safetensors is float32[2], the param is float32[3]\n");
  std::ifstream in(tmp.path("w.safetensors"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  tmp.file("w.safetensors", bytes.substr(0, bytes.size() - 4));
  EXPECT_NE(load_error(model).find(model + ":5:50: error: b.values: the weights file '" + tmp.path("w.safetensors") +
                                   "' is truncated: tensor 'b' ends at byte 8 of 4"),
            std::string::npos)
      << load_error(model);
}

}  // namespace
}  // namespace gbc
