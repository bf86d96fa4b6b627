// `gbcheck check A.yaml B.yaml DIR`: several models in one process, one after the other, so that
// each adapter backend starts once for all of them (harness/adapters/adapter_session.h) instead of
// once per model. Each model's report is printed as `check MODEL` prints it, under a `== MODEL ==`
// line; a model that fails to load or whose check ends in an error prints that error and the run
// goes on. A summary ends the run: the count per outcome and a line per model that did not pass;
// the exit code is the highest of the models'. With -q, one `MODEL: PASS|FAIL` line per model.
// Test: tests/cli/check_models_test.cpp.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gbc {

/// How one model's check ended: its exit code, and why it did not pass ("" when it did).
struct ModelOutcome {
  int exit_code = 0;
  std::string reason;
};

/// Whether the arguments name several models: more than one, or a folder.
bool names_several_models(const std::vector<std::string>& arguments);

/// The model files the arguments name, in order: a folder stands for its models
/// (harness/model/model_folder.h), anything else for itself. nullopt (after printing why) when a
/// folder holds no model.
std::optional<std::vector<std::string>> model_files(const std::vector<std::string>& arguments);

/// Checks each model with `check_one` (which prints its report, or with -q nothing), catching what
/// it throws, then prints the summary. Returns the highest exit code.
int check_models(const std::vector<std::string>& models, bool quiet,
                 const std::function<ModelOutcome(const std::string& model)>& check_one);

}  // namespace gbc
