// gbcheck-gen: writes generated models (harness/fuzz/graph_generator.h) to a folder, one
// model.yaml per seed, for fuzzing seed corpora and by-hand rechecks with `gbcheck check`.
//   gbcheck-gen --out DIR [--count N] [--seed S] [--fuzz-config FILE] [--min-nodes A] [--no-breaks] ...
// Settings: configs/fuzz.yaml's generator section, then --fuzz-config, then the options.
// Exit codes as gbcheck's: 0 written, 2 bad usage or config, 3 internal error, 4 configs/ missing.
// Tested in tests/fuzz/fuzz_config_test.cpp.
#include <CLI/CLI.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "compiler/ir/dtype.h"
#include "compiler/support/config_dir.h"
#include "harness/fuzz/combo_coverage.h"
#include "harness/fuzz/fuzz_config.h"
#include "harness/fuzz/graph_generator.h"
#include "harness/model/model_writer.h"

namespace {

// The options given, for the header comment that tells how to regenerate a file.
std::string replay_command(int argc, char** argv, uint64_t seed) {
  std::string cmd = "gbcheck-gen --seed " + std::to_string(seed) + " --count 1";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--seed" || a == "--count" || a == "--out" || a == "-o" || a == "-n") {
      ++i;  // these take a value that the replay sets itself
      continue;
    }
    if (a.rfind("--seed=", 0) == 0 || a.rfind("--count=", 0) == 0 || a.rfind("--out=", 0) == 0) continue;
    cmd += " " + a;
  }
  return cmd + " --out DIR";
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir, fuzz_config, coverage_report;
  uint64_t first_seed = 0;
  int count = 100;
  std::vector<std::string> dtypes, backends;
  std::optional<int> min_nodes, max_nodes, max_rank, cases;
  std::optional<int64_t> max_numel, max_dim_size;
  std::optional<double> special_values;
  std::optional<std::string> device;
  bool no_breaks = false, no_random = false;

  CLI::App app{"Writes randomly generated, valid gbcheck models (model.yaml) to a folder.\n"
               "Settings: configs/fuzz.yaml, then --fuzz-config FILE, then the options below (docs/configs.md)."};
  app.add_option("-o,--out", out_dir, "folder to write gen_<seed>.yaml files to (created if missing)")->required();
  app.add_option("-n,--count", count, "how many models")->check(CLI::Range(1, 10000000));
  // Model seeds are int64 (check.seed): a larger one would write models that do not load.
  app.add_option("--seed", first_seed, "seed of the first model; the others take the next seeds")
      ->check(CLI::Range(uint64_t{0}, static_cast<uint64_t>(std::numeric_limits<int64_t>::max())));
  app.add_option("--fuzz-config", fuzz_config, "a fuzz config whose keys override configs/fuzz.yaml's (docs/configs.md)");
  app.add_option("--min-nodes", min_nodes, "fewest nodes per graph");
  app.add_option("--max-nodes", max_nodes, "most nodes per graph");
  app.add_option("--dtypes", dtypes, "dtypes of inputs and casts, the main one first")->delimiter(',');
  app.add_flag("--no-breaks", no_breaks, "straight-line graphs: no print, item, if, nonzero, opaque custom");
  app.add_flag("--no-random", no_random, "no dropout in training mode");
  app.add_option("--special-values", special_values, "check.special_values and rate of NaN/Inf numbers");
  app.add_option("--max-rank", max_rank, "largest tensor rank");
  app.add_option("--max-numel", max_numel, "largest tensor element count");
  app.add_option("--max-dim-size", max_dim_size, "largest size of a dim");
  app.add_option("--backends", backends, "check.backends of the models")->delimiter(',');
  app.add_option("--device", device, "check.device of the models (cpu avoids kernels 1.13 lacks)");
  app.add_option("--cases", cases, "check.cases of the models");
  app.add_option("--coverage-report", coverage_report,
                 "also write the op x dtype x layout x special-value combinations the models exercise to FILE");
  CLI11_PARSE(app, argc, argv);

  gbc::GeneratorConfig config;
  try {
    config = gbc::load_fuzz_config(fuzz_config).generator;
  } catch (const gbc::ConfigError& e) {
    std::cerr << e.diagnostics().str();
    return 2;
  } catch (const gbc::ConfigNotFound& e) {
    std::cerr << "gbcheck-gen: " << e.what() << "\n";
    return 4;
  }
  if (min_nodes) config.min_nodes = *min_nodes;
  if (max_nodes) config.max_nodes = *max_nodes;
  if (no_breaks) config.allow_breaks = false;
  if (no_random) config.allow_random = false;
  if (special_values) config.special_values = *special_values;
  if (max_rank) config.max_rank = *max_rank;
  if (max_numel) config.max_numel = *max_numel;
  if (max_dim_size) config.max_dim_size = *max_dim_size;
  if (!backends.empty()) config.backends = backends;
  if (device) config.device = *device;
  if (cases) config.cases = *cases;
  if (!dtypes.empty()) {
    config.dtypes.clear();
    for (const auto& name : dtypes) {
      auto d = gbc::parse_dtype(name);
      if (!d) {
        std::cerr << "gbcheck-gen: unknown dtype '" << name << "'\n";
        return 2;
      }
      config.dtypes.push_back(*d);
    }
  }
  try {
    gbc::validate_generator_config(config);
    std::filesystem::create_directories(out_dir);
    gbc::ComboCoverage coverage;
    for (int i = 0; i < count; ++i) {
      uint64_t seed = first_seed + static_cast<uint64_t>(i);
      gbc::Model model = gbc::generate_model(seed, config);
      if (!coverage_report.empty()) coverage.add(model);
      gbc::WriteOptions options;
      options.header_comment = "Generated by " + replay_command(argc, argv, seed);
      std::filesystem::path path = std::filesystem::path(out_dir) / (model.name + ".yaml");
      std::ofstream out(path);
      out << gbc::write_model_yaml(model, options);
      if (!out) {
        std::cerr << "gbcheck-gen: cannot write " << path.string() << "\n";
        return 2;
      }
    }
    if (!coverage_report.empty()) {
      std::ofstream report(coverage_report);
      report << coverage.report();
      if (!report) {
        std::cerr << "gbcheck-gen: cannot write " << coverage_report << "\n";
        return 2;
      }
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "gbcheck-gen: " << e.what() << "\n";
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    std::cerr << "gbcheck-gen: " << e.what() << "\n";
    return 2;
  } catch (const gbc::InternalError& e) {
    std::cerr << "gbcheck-gen: internal error: " << e.what() << "\n";
    return 3;
  }
  std::cerr << "gbcheck-gen: wrote " << count << (count == 1 ? " model" : " models") << " to " << out_dir << "\n";
  return 0;
}
