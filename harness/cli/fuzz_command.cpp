// `gbcheck fuzz --out DIR [--time 8h] [--cases N] [--backends gbc,nnc] [--seed S] [--jobs J]
// [--shard i/N] [--resume] [--fuzz-config FILE]`: the nightly fuzzing campaign
// (harness/fuzz/campaign/fuzz_campaign.h), with the generator settings of configs/fuzz.yaml and
// FILE's keys on top. Exit codes: 0 the run completed (its findings are in the store: `gbcheck db
// report DIR`), 2 bad usage or config, 3 a worker died outside the sandbox (a gbcheck bug), 4
// configs/ missing, 130 interrupted (continue it with --resume). Docs: docs/fuzzing.md,
// docs/configs.md. Tests: tests/fuzz/fuzz_cli_test.cpp, tests/cli/config_flags_test.cpp.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "compiler/passes/pass_manager.h"
#include "harness/adapters/backends_config.h"
#include "harness/cli/cli.h"
#include "harness/cli/inject_fault.h"
#include "harness/cli/option_checks.h"
#include "harness/cli/run_args.h"
#include "harness/fuzz/campaign/duration.h"
#include "harness/fuzz/campaign/fuzz_campaign.h"
#include "harness/fuzz/campaign/fuzz_progress.h"
#include "harness/fuzz/fuzz_config.h"
#include "harness/runner/check_report.h"

namespace gbc {

namespace {

// The generator settings and backends of a new run: configs/fuzz.yaml, then --fuzz-config, then
// the command line's options. Backends named by a config file are checked here, where their
// file:line:col is known. Returns the exit code to stop with, or nullopt to go on.
struct GeneratorArgs {
  std::string fuzz_config;
  std::string backends_config;
  std::vector<std::string> backends;
  std::optional<int> min_nodes, max_nodes, graph_cases;
  bool no_breaks = false;

  std::optional<int> apply(FuzzOptions& f) const {
    FuzzConfig config = load_fuzz_config(fuzz_config);
    register_external_backends(backends_config);
    graph_pipeline();  // read here: an error in it is the run's, not every graph's check
    f.generator = config.generator;
    f.generator.cases = graph_cases.value_or(config.campaign.graph_cases);
    if (min_nodes) f.generator.min_nodes = *min_nodes;
    if (max_nodes) f.generator.max_nodes = *max_nodes;
    if (no_breaks) f.generator.allow_breaks = false;
    f.fuzz_config_path = fuzz_config.empty() ? "" : std::filesystem::absolute(fuzz_config).string();
    f.backends_config = backends_config.empty() ? "" : std::filesystem::absolute(backends_config).string();
    if (!backends.empty()) {
      f.check.backends = backends;
      return std::nullopt;
    }
    f.check.backends = config.campaign.backends;
    Diagnostics d;
    for (const std::string& b : f.check.backends)
      if (!find_backend(b))
        d.error(config.loc_of("campaign.backends"), "unknown backend '" + b + "'", "`gbcheck check --help` lists the backends");
    if (!d.has_errors()) return std::nullopt;
    std::cerr << d.str();
    return kExitInvalid;
  }
};

}  // namespace

std::function<int()> add_fuzz_command(CLI::App& sub) {
  struct Args {
    FuzzOptions fuzz;
    GeneratorArgs generator;
    std::string time, shard;
    std::optional<int64_t> cases;
    int64_t seed = 0;
    double memory_mb = 4096;
    std::string trace_dir;
    bool no_cache = false, quiet = false;
  };
  auto a = std::make_shared<Args>();
  FuzzOptions& f = a->fuzz;
  GeneratorArgs& g = a->generator;
  sub.add_option("--out,-o", f.out_dir, "folder of the campaign: fuzz.db (the store) and repros/")
      ->required()
      ->check(writable_folder());
  sub.add_option("--time", a->time, "how long to run: 8h, 90m, 1h30m, 45s (a resumed run keeps its own limit)");
  sub.add_option("--cases", a->cases, "size of the seed space: graphs at positions 0..N-1 (all shards together)")
      ->check(whole_number(1));
  sub.add_option("--backends", g.backends, "compiled paths to check against eager (default: campaign.backends of the fuzz config)")
      ->delimiter(',');
  sub.add_option("--seed", a->seed, "seed of position 0: position k checks the graph of seed S+k")
      ->check(whole_number(0))
      ->capture_default_str();
  sub.add_option("--jobs,-j", f.jobs, "worker processes")->check(whole_number(1, 1024))->capture_default_str();
  sub.add_option("--shard", a->shard, "i/N: check only positions k = i (mod N), for N machines");
  sub.add_flag("--resume", f.resume, "continue the unfinished run in DIR with its stored settings");
  sub.add_option("--fuzz-config", g.fuzz_config,
                 "a fuzz config whose keys override configs/fuzz.yaml's (generator settings, op weights; docs/configs.md)");
  sub.add_option("--backends-config", g.backends_config,
                 "a backends file whose adapters join configs/backends.yaml's (docs/adapters.md)");
  sub.add_option("--min-nodes", g.min_nodes, "fewest nodes per graph (default: the fuzz config's)")->check(whole_number(1, 100000));
  sub.add_option("--max-nodes", g.max_nodes, "most nodes per graph (default: the fuzz config's)")->check(whole_number(1, 100000));
  sub.add_option("--graph-cases", g.graph_cases, "input cases checked per graph (check.cases; default: campaign.graph_cases)")
      ->check(whole_number(1, 100000));
  sub.add_flag("--no-breaks", g.no_breaks, "straight-line graphs: no print, item, if, nonzero, opaque custom");
  sub.add_option("--timeout", f.check.limits.timeout_s, "seconds one graph's check may take before it counts as a hang")
      ->check(number_at_least(0.001))
      ->capture_default_str();
  sub.add_option("--memory-mb", a->memory_mb, "memory one graph's check may add before it counts as out of memory")
      ->check(number_at_least(1))
      ->capture_default_str();
  sub.add_option("--reduce-checks", f.reduce_checks, "checks the reducer may run per new signature (0: no reduction)")
      ->check(whole_number(0, std::numeric_limits<int>::max()))
      ->capture_default_str();
  sub.add_option("--kernel-batch", f.kernel_batch,
                 "graphs whose gbc kernels a worker builds in one compiler run before checking them (the kernels "
                 "each check then runs are the ones it would compile; 0: each check compiles its own)")
      ->check(whole_number(0, 1000))
      ->capture_default_str();
  sub.add_option("--inject-fault", f.check.backend_options.inject_fault,
                 "TESTING AID: build gbc's kernels with a known bug (kinds: `gbcheck --inject-fault list`)");
  sub.add_option("--cache-dir", f.check.backend_options.cache_dir,
                 "where compiled kernels are cached (default: $GBCHECK_CACHE_DIR or ~/.cache/gbcheck)");
  sub.add_flag("--no-cache", a->no_cache, "compile every kernel afresh");
  sub.add_flag("--quiet,-q", a->quiet, "no progress line, only the final summary");
  sub.add_option("--trace", a->trace_dir,
                 "write a structured trace (JSON lines, docs/report.md) into DIR: every case with its outcome and the "
                 "signatures it hit (also $GBCHECK_TRACE_DIR)");
  return [a]() -> int {
    if (!start_trace(a->trace_dir)) return kExitInvalid;
    FuzzOptions f = a->fuzz;
    try {
      if (!a->time.empty()) f.time_s = parse_duration(a->time);
      if (!a->shard.empty()) f.shard = Shard::parse(a->shard);
    } catch (const std::invalid_argument& e) {
      std::cerr << "gbcheck fuzz: " << e.what() << "\n";
      return kExitInvalid;
    }
    f.cases = a->cases;
    f.seed = static_cast<uint64_t>(a->seed);
    if (auto stop = a->generator.apply(f)) return *stop;
    f.check.backend_options.use_cache = !a->no_cache;
    f.check.limits.memory_bytes = static_cast<size_t>(a->memory_mb * 1024 * 1024);
    if (!f.resume && !f.check.backend_options.inject_fault.empty())
      if (auto stop = check_inject_fault(f.check.backend_options.inject_fault, f.check.backends)) return *stop;
    if (!a->quiet) {
      f.progress = &std::cerr;
      f.tty = isatty(STDERR_FILENO) != 0;
    }
    FuzzResult r;
    try {
      r = run_fuzz(f);
    } catch (const std::invalid_argument& e) {
      std::cerr << "gbcheck fuzz: " << e.what() << "\n";
      return kExitInvalid;
    } catch (const StoreError& e) {
      std::cerr << "gbcheck fuzz: " << e.what() << "\n";
      return kExitInvalid;
    }
    FuzzTally t;
    t.cases = r.counts.cases;
    t.failed = r.counts.failed;
    t.invalid = r.counts.invalid;
    t.signatures = r.counts.signatures;
    t.new_signatures = r.new_signatures;
    t.elapsed_s = r.run.active_s;
    t.session_cases = r.counts.cases;
    t.session_s = r.run.active_s;
    if (r.run.case_limit) t.cases_total = Shard{r.run.shard_index, r.run.shard_count}.owned(*r.run.case_limit);
    std::cout << "fuzz: run " << r.run.uid << " " << (r.interrupted ? "interrupted" : r.run.status) << ": "
              << format_tally(t) << "\n";
    std::cout << "store: " << f.out_dir << "/" << FuzzStore::kFileName << " (gbcheck db report " << f.out_dir << ")\n";
    if (!r.error.empty()) {
      std::cerr << "gbcheck fuzz: " << r.error << "this is a bug in gbcheck; the run can continue with --resume\n";
      return kExitInternal;
    }
    if (r.interrupted) {
      std::cout << "continue with: gbcheck fuzz --out " << f.out_dir << " --resume\n";
      return 130;
    }
    return kExitPass;
  };
}

}  // namespace gbc
