// The files under configs/: each loads and is complete (a key removed from a defaults file is an
// error), every invalid config in corpus/config-errors/ is rejected with exactly the diagnostics
// in its .expected file, and configs/ is found through $GBCHECK_CONFIG_DIR or the source tree
// (compiler/support/config_dir.h), with an error naming where it looked when it is not there.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>

#include "compiler/ir/yaml_reader.h"
#include "compiler/passes/pass_manager.h"
#include "compiler/passes/pipeline_config.h"
#include "compiler/support/config_dir.h"
#include "harness/adapters/backends_config.h"
#include "harness/fuzz/fuzz_config.h"
#include "harness/model/tolerance_presets.h"
#include "harness/reduce/reduce_config.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> registered_graph_passes() {
  std::vector<std::string> names;
  for (const auto& p : graph_pass_registry()) names.push_back(p.name);
  return names;
}

// How the corpus reads each kind: fuzz and reduce files as overrides, pipeline files whole.
const std::map<std::string, std::function<void(const std::string&)>>& readers() {
  static const std::map<std::string, std::function<void(const std::string&)>> table = {
      {"fuzz", [](const std::string& path) { load_fuzz_config(path); }},
      {"reduce", [](const std::string& path) { load_reduce_config(path); }},
      {"tolerances", [](const std::string& path) { load_tolerance_presets(path); }},
      {"pipeline", [](const std::string& path) { load_pipeline_config(path, registered_graph_passes()); }},
      {"backends", [](const std::string& path) { read_backends_config(read_config_file(path), path); }},
  };
  return table;
}

TEST(ConfigFiles, EveryInvalidConfigGivesItsExpectedDiagnostics) {
  int checked = 0;
  for (const auto& [kind, read] : readers()) {
    const fs::path dir = fs::path(GBCHECK_SOURCE_DIR) / "corpus" / "config-errors" / kind;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() != ".yaml") continue;
      fs::path expected_path = entry.path();
      expected_path.replace_extension(".expected");
      // Paths in messages are as given: relative to the source dir, like a user's command line.
      const std::string rel = "corpus/config-errors/" + kind + "/" + entry.path().filename().string();
      std::string got;
      try {
        read(rel);
        got = "(read without errors)\n";
      } catch (const ConfigError& e) {
        got = e.diagnostics().str();
      }
      std::optional<std::string> expected = read_text_file(expected_path.string());
      if (!expected) ADD_FAILURE() << "missing " << expected_path.string() << "; the diagnostics are:\n" << got;
      else EXPECT_EQ(got, *expected) << "for " << rel;
      ++checked;
    }
  }
  EXPECT_GE(checked, 15);
}

TEST(ConfigFiles, TheShippedFilesLoad) {
  FuzzConfig fuzz = load_fuzz_config();
  EXPECT_TRUE(generator_config_problems(fuzz.generator).empty());
  EXPECT_FALSE(fuzz.campaign.backends.empty());
  EXPECT_TRUE(reduce_config_problems(load_reduce_config()).empty());
  EXPECT_FALSE(graph_pipeline().empty());
  EXPECT_FALSE(load_tolerance_presets().empty());
}

// A defaults file must hold every key: take any one line with a key out of the shipped file and
// the read names it (an override file may leave it out).
TEST(ConfigFiles, ADefaultsFileWithoutAKeyIsAnError) {
  struct Kind {
    const char* file;
    std::function<void(const std::string& text, bool complete)> read;
  };
  const std::vector<Kind> kinds = {
      {"fuzz.yaml", [](const std::string& t, bool complete) { FuzzConfig c = load_fuzz_config(); read_fuzz_config(t, "f.yaml", complete, c); }},
      {"reduce.yaml", [](const std::string& t, bool complete) { ReduceConfig c = load_reduce_config(); read_reduce_config(t, "r.yaml", complete, c); }},
      {"tolerances.yaml", [](const std::string& t, bool complete) { TolerancePresets c; read_tolerance_presets(t, "t.yaml", complete, c); }},
  };
  const std::regex scalar_key("^ {0,2}([a-z_]+): .*$");
  for (const Kind& k : kinds) {
    const std::string text = *read_text_file(config_file(k.file));
    std::vector<std::string> lines;
    for (size_t start = 0; start < text.size();) {
      size_t end = text.find('\n', start);
      lines.push_back(text.substr(start, end - start));
      start = end == std::string::npos ? text.size() : end + 1;
    }
    int tried = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      std::smatch m;
      if (!std::regex_match(lines[i], m, scalar_key)) continue;
      std::string without;
      for (size_t j = 0; j < lines.size(); ++j)
        if (j != i) without += lines[j] + "\n";
      SCOPED_TRACE(std::string(k.file) + " without line " + std::to_string(i + 1) + ": " + lines[i]);
      try {
        k.read(without, true);
        ADD_FAILURE() << "read without the key";
      } catch (const ConfigError& e) {
        EXPECT_NE(e.diagnostics().str().find("has no key '" + m[1].str() + "'"), std::string::npos) << e.diagnostics().str();
      }
      EXPECT_NO_THROW(k.read(without, false));
      ++tried;
    }
    EXPECT_GE(tried, 3) << k.file;
  }
}

TEST(ConfigFiles, ConfigDirComesFromTheEnvironmentOrTheSourceTree) {
  unsetenv("GBCHECK_CONFIG_DIR");
  EXPECT_EQ(fs::path(config_dir()), fs::path(GBCHECK_SOURCE_DIR) / "configs");
  EXPECT_TRUE(fs::exists(config_file("fuzz.yaml")));
  const fs::path elsewhere = fs::temp_directory_path() / ("gbcheck-no-configs-" + std::to_string(::getpid()));
  setenv("GBCHECK_CONFIG_DIR", elsewhere.c_str(), 1);
  EXPECT_EQ(config_dir(), elsewhere.string());
  try {
    config_file("reduce.yaml");
    ADD_FAILURE() << "found a config file in an empty folder";
  } catch (const ConfigNotFound& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find((elsewhere / "reduce.yaml").string() + " not found"), std::string::npos) << message;
    EXPECT_NE(message.find("GBCHECK_CONFIG_DIR is " + elsewhere.string()), std::string::npos) << message;
  }
  fs::create_directories(elsewhere);
  std::ofstream(elsewhere / "reduce.yaml") << "replay_cases: 1\n";
  EXPECT_EQ(config_file("reduce.yaml"), (elsewhere / "reduce.yaml").string());
  std::error_code ignored;
  fs::remove(elsewhere / "reduce.yaml", ignored);
  fs::remove(elsewhere, ignored);
  unsetenv("GBCHECK_CONFIG_DIR");
}

}  // namespace
}  // namespace gbc
