// libFuzzer target for the model loader and validator (harness/model): any bytes as a model.yaml.
// The loader promises never to crash on bad input, so the only acceptable outcomes are a Model or
// a ModelError with diagnostics; anything else that escapes (yaml-cpp's exceptions, an internal
// error, std::out_of_range) aborts, and so do sanitizer reports, hangs and leaks. A model that
// loads must also write out (model_writer.h) to text that loads again: the writer and the loader
// agree on every model the loader accepts.
// Built and run by ci/fuzz_loader.sh (clang, -fsanitize=fuzzer,address,undefined); seed corpus:
// corpus/examples and corpus/errors.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "compiler/ir/diagnostics.h"
#include "harness/model/model_loader.h"
#include "harness/model/model_writer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  gbc::Model model;
  try {
    model = gbc::load_model_text(text, "fuzz.yaml");
  } catch (const gbc::ModelError& e) {
    if (e.diagnostics().str().empty()) {
      std::fprintf(stderr, "ModelError without diagnostics\n");
      std::abort();
    }
    return 0;
  }
  std::string written = gbc::write_model_yaml(model);
  try {
    gbc::load_model_text(written, "rewritten.yaml");
  } catch (const gbc::ModelError& e) {
    std::fprintf(stderr, "a loaded model wrote text that does not load:\n%s\n--- written:\n%s\n",
                 e.diagnostics().str().c_str(), written.c_str());
    std::abort();
  }
  return 0;
}
