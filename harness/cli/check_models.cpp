#include "harness/cli/check_models.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include "harness/cli/error_exit.h"
#include "harness/model/model_folder.h"
#include "harness/runner/check_report.h"

namespace gbc {
namespace {

bool is_folder(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec);
}

// An error message in one line for the summary: its first line without the "gbcheck: " gbcheck's
// own lines start with and without its hint, and how many lines (diagnostics) follow.
std::string first_line(const std::string& message) {
  std::string line = message.substr(0, message.find('\n'));
  const std::string prefix = "gbcheck: ";
  if (line.rfind(prefix, 0) == 0) line = line.substr(prefix.size());
  line = line.substr(0, line.find("; hint: "));
  const auto more = std::count(message.begin(), message.end(), '\n') - 1;
  return more > 0 ? line + " (and " + std::to_string(more) + " more)" : line;
}

// "17 passed, 2 failed, 1 invalid": passed always, the other outcomes when some model had them.
std::string outcome_counts(const std::vector<ModelOutcome>& outcomes) {
  static const std::map<int, std::string> names = {{kExitPass, "passed"},
                                                   {kExitDivergence, "failed"},
                                                   {kExitInvalid, "invalid"},
                                                   {kExitInternal, "hit an internal error"},
                                                   {kExitEnvironment, "could not run here"}};
  std::map<int, int> counts = {{kExitPass, 0}};
  for (const ModelOutcome& o : outcomes) ++counts[o.exit_code];
  std::string out;
  for (const auto& [code, count] : counts) {
    const auto name = names.find(code);
    out += (out.empty() ? "" : ", ") + std::to_string(count) + " " +
           (name == names.end() ? "exit " + std::to_string(code) : name->second);
  }
  return out;
}

}  // namespace

bool names_several_models(const std::vector<std::string>& arguments) {
  return arguments.size() > 1 || (arguments.size() == 1 && is_folder(arguments[0]));
}

std::optional<std::vector<std::string>> model_files(const std::vector<std::string>& arguments) {
  std::vector<std::string> out;
  for (const std::string& arg : arguments) {
    if (!is_folder(arg)) {
      out.push_back(arg);
      continue;
    }
    const std::vector<std::string> found = models_in_folder(arg);
    if (found.empty()) {
      std::cerr << "gbcheck: " << arg << " holds no model (*.yaml) to check: a folder stands for the *.yaml files "
                << "directly in it, not for those of its subfolders\n";
      return std::nullopt;
    }
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

int check_models(const std::vector<std::string>& models, bool quiet,
                 const std::function<ModelOutcome(const std::string& model)>& check_one) {
  std::vector<ModelOutcome> outcomes;
  for (size_t i = 0; i < models.size(); ++i) {
    if (!quiet) std::cout << (i == 0 ? "" : "\n") << "== " << models[i] << " (" << i + 1 << "/" << models.size() << ") ==\n";
    std::cout.flush();  // before the model's errors on stderr
    ModelOutcome outcome;
    try {
      outcome = check_one(models[i]);
    } catch (const std::exception& e) {
      const ErrorExit error = error_exit(e);
      std::cout.flush();
      std::cerr << error.message;
      outcome = {error.exit_code, first_line(error.message)};
    }
    if (outcome.exit_code != kExitPass && outcome.reason.empty()) outcome.reason = exit_code_meaning(outcome.exit_code);
    if (quiet) std::cout << models[i] << ": " << (outcome.exit_code == kExitPass ? "PASS" : "FAIL") << "\n";
    std::cout.flush();
    outcomes.push_back(outcome);
  }
  std::cout << (quiet ? "" : "\n") << "summary: " << models.size() << " models: " << outcome_counts(outcomes) << "\n";
  int exit_code = kExitPass;
  for (size_t i = 0; i < models.size(); ++i) {
    exit_code = std::max(exit_code, outcomes[i].exit_code);
    if (outcomes[i].exit_code != kExitPass)
      std::cout << "  " << models[i] << ": exit " << outcomes[i].exit_code << ": " << outcomes[i].reason << "\n";
  }
  return exit_code;
}

}  // namespace gbc
