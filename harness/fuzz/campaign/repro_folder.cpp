#include "harness/fuzz/campaign/repro_folder.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "harness/model/model_writer.h"
#include "harness/reduce/reducer.h"
#include "harness/repro/repro.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

// `gbcheck repro` of `model` into dir; false when its drawn cases do not fail.
bool write_standalone(const Model& model, const std::string& backend, const std::string& dir,
                      const ReproFolderOptions& options) {
  ReproOptions r;
  r.run = run_options_from_model(model);
  r.run.backends = {backend};
  r.run.backend_options.cache_dir = options.check.backend_options.cache_dir;
  r.run.backend_options.use_cache = options.check.backend_options.use_cache;
  r.run.backend_options.inject_fault = options.check.backend_options.inject_fault;
  r.run.max_shrink_tries = 0;
  r.backend = backend;
  r.out_dir = dir;
  r.timeout_s = options.check.limits.timeout_s;
  try {
    return write_repro(model, r).reproduced;
  } catch (const std::runtime_error& e) {
    // The reduction stands without it; say why the standalone folder is missing.
    fs::create_directories(dir);
    std::ofstream(fs::path(dir) / "NOT-WRITTEN.txt") << "gbcheck repro failed: " << e.what() << "\n";
    return false;
  }
}

}  // namespace

std::string write_repro_folder(const Model& model, const GraphFailure& failure, const std::string& dir,
                               const ReproFolderOptions& options) {
  fs::create_directories(dir);
  uint64_t seed = model.check.seed;
  const std::string& backend = failure.hit.backend;
  bool reducible = std::find(options.check.backends.begin(), options.check.backends.end(), backend) !=
                   options.check.backends.end();
  WriteOptions w;
  w.header_comment = "Found by gbcheck fuzz: " + failure.hit.key + "\n" + failure.hit.summary +
                     "\nRegenerate: gbcheck-gen --seed " + std::to_string(seed) + " --count 1" +
                     (options.gen_args.empty() ? "" : " " + options.gen_args) + " --out DIR\nRecheck: gbcheck original.yaml" +
                     (reducible ? " --backend " + backend : "") + (options.check_args.empty() ? "" : " " + options.check_args);
  std::string original = (fs::path(dir) / "original.yaml").string();
  {
    std::ofstream out(original);
    out << write_model_yaml(model, w);
    if (!out) throw std::runtime_error("cannot write " + original);
  }
  if (!reducible || options.max_checks <= 0) return "done";

  ReduceOptions r;
  r.backend = backend;
  r.backend_options = options.check.backend_options;
  r.limits = options.check.limits;
  r.max_checks = options.max_checks;
  ReduceResult result = reduce_model(model, r);
  // The reducer takes the backend's first failing case, which may fail in another way than the
  // hit being reduced; that minimum belongs to another signature.
  bool kept = result.status == ReduceResult::Status::Reduced && result.original.same_failure(failure.signature);
  if (kept) write_reduction(result, original, (fs::path(dir) / "reduced").string());
  // The standalone folder names the file its model came from (generated graphs have none).
  Model reduced = result.model, whole = model;
  reduced.path = (fs::path(dir) / "reduced" / "model.yaml").string();
  whole.path = original;
  std::string standalone = (fs::path(dir) / "repro").string();
  if (!(kept && result.reproduces_with_drawn_inputs && write_standalone(reduced, backend, standalone, options)))
    write_standalone(whole, backend, standalone, options);
  return kept ? "done" : "failed";
}

}  // namespace gbc
