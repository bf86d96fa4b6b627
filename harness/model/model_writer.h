// Writes a Model back as model.yaml text (format gbcheck/v1) that load_model_text reads into the
// same graph. Used by the reducer (minimized models), the fuzzer (generated graphs) and repros.
#pragma once

#include <string>

#include "harness/model/model.h"

namespace gbc {

struct WriteOptions {
  std::string header_comment;  // written first, each line prefixed with "# "
  bool write_check = true;
};

std::string write_model_yaml(const Model& model, const WriteOptions& options = {});

}  // namespace gbc
