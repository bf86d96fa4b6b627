// configs/tolerances.yaml: the shipped presets are the table the code held before they became
// data (torch.testing.assert_close's defaults), an override file changes only what it names, a
// model's check.tolerance wins over the presets, and a run's presets are written into the models
// it writes. The loader's error messages are pinned in corpus/config-errors/tolerances/
// (tests/harness/config_files_test.cpp).
#include "harness/model/tolerance_presets.h"

#include <gtest/gtest.h>

#include "harness/model/model_loader.h"
#include "harness/model/model_writer.h"
#include "tests/support/temp_dir.h"

namespace gbc {
namespace {

void expect_tolerance(const Tolerance& got, double rtol, double atol) {
  EXPECT_EQ(got.rtol, rtol);
  EXPECT_EQ(got.atol, atol);
}

TEST(TolerancePresets, TheShippedFileHoldsTorchTestingsDefaults) {
  // The values of the switch in oracles/tolerance.h that configs/tolerances.yaml replaced.
  const TolerancePresets presets = load_tolerance_presets();
  ASSERT_EQ(presets.size(), 4u);
  expect_tolerance(presets.at(DType::Float16), 1e-3, 1e-5);
  expect_tolerance(presets.at(DType::BFloat16), 1.6e-2, 1e-5);
  expect_tolerance(presets.at(DType::Float32), 1.3e-6, 1e-5);
  expect_tolerance(presets.at(DType::Float64), 1e-7, 1e-7);
  for (const auto& [dtype, t] : presets) expect_tolerance(default_tolerance(dtype), t.rtol, t.atol);
  for (DType exact : {DType::Bool, DType::UInt8, DType::Int8, DType::Int16, DType::Int32, DType::Int64})
    expect_tolerance(default_tolerance(exact), 0.0, 0.0);
}

TEST(TolerancePresets, AnOverrideChangesOnlyWhatItNames) {
  testing::TempDir dir("tolerance-presets");
  const TolerancePresets presets =
      load_tolerance_presets(dir.file("loose.yaml", "float16:\n  rtol: 0.01\nfloat64: {atol: 0.5}\n"));
  expect_tolerance(presets.at(DType::Float16), 0.01, 1e-5);
  expect_tolerance(presets.at(DType::Float64), 1e-7, 0.5);
  expect_tolerance(presets.at(DType::Float32), 1.3e-6, 1e-5);
  // The shipped presets stay as they were for a run without the file.
  expect_tolerance(load_tolerance_presets().at(DType::Float16), 1e-3, 1e-5);
}

TEST(TolerancePresets, ADefaultsFileMustNameBothFieldsOfEveryFloatingDtype) {
  TolerancePresets presets;
  try {
    read_tolerance_presets("float16: {rtol: 1.0e-3}\n", "t.yaml", true, presets);
    ADD_FAILURE() << "read an incomplete defaults file";
  } catch (const ConfigError& e) {
    const std::string message = e.diagnostics().str();
    EXPECT_NE(message.find("t.yaml:1:10: error: float16 has no key 'atol'"), std::string::npos) << message;
    EXPECT_NE(message.find("tolerances config has no key 'float32'"), std::string::npos) << message;
  }
}

TEST(TolerancePresets, TheModelsOwnToleranceWinsOverThePresets) {
  const std::string text =
      "format: gbcheck/v1\ninputs:\n  x: {shape: [4], dtype: float32}\n  h: {shape: [4], dtype: float16}\n"
      "graph:\n  - {id: y, op: tanh, args: [x]}\n  - {id: z, op: sin, args: [x]}\n  - {id: w, op: cos, args: [h]}\n"
      "outputs: [y, z, w]\ncheck:\n  tolerance: {float32: {rtol: 0.5, atol: 0.25}, z: {rtol: 0.125, atol: 0}}\n";
  Model m = load_model_text(text, "t.yaml");
  m.check.tolerance_presets = {{DType::Float32, {0.75, 0.75}}, {DType::Float16, {0.0625, 0.03125}}};
  expect_tolerance(m.check.tolerance_for(DType::Float32, "y"), 0.5, 0.25);    // check.tolerance's dtype
  expect_tolerance(m.check.tolerance_for(DType::Float32, "z"), 0.125, 0.0);   // the output's own
  expect_tolerance(m.check.tolerance_for(DType::Float16, "w"), 0.0625, 0.03125);  // the run's preset
  expect_tolerance(m.check.tolerance_for(DType::Float64, "v"), 1e-7, 1e-7);   // the shipped one
}

TEST(TolerancePresets, ARunsOwnPresetsAreWrittenIntoTheModel) {
  const std::string text =
      "format: gbcheck/v1\ninputs:\n  x: {shape: [4], dtype: float32}\ngraph:\n  - {id: y, op: tanh, args: [x]}\n"
      "outputs: [y]\n";
  Model m = load_model_text(text, "t.yaml");
  m.check.tolerance_presets = load_tolerance_presets();
  EXPECT_EQ(write_model_yaml(m).find("tolerance"), std::string::npos) << "shipped presets are not written";
  m.check.tolerance_presets[DType::Float32] = {0.5, 0.25};
  Model again = load_model_text(write_model_yaml(m), "again.yaml");
  expect_tolerance(again.check.tolerance_for(DType::Float32, "y"), 0.5, 0.25);
  EXPECT_EQ(again.check.tolerance.count(DType::Float16), 0u);
}

}  // namespace
}  // namespace gbc
