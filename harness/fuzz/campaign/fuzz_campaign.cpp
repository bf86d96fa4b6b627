#include "harness/fuzz/campaign/fuzz_campaign.h"

#include <ATen/Parallel.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <thread>

#include "compiler/support/trace.h"
#include "compiler/backends/backend.h"
#include "harness/adapters/adapter_session.h"
#include "harness/adapters/backends_config.h"
#include "harness/fuzz/campaign/fuzz_progress.h"
#include "harness/fuzz/campaign/kernel_prefetch.h"
#include "harness/fuzz/campaign/repro_folder.h"
#include "harness/fuzz/fuzz_config.h"
#include "harness/fuzz/graph_generator.h"
#include "harness/sandbox/coverage_dump.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_stop_signal(int) { g_stop = 1; }

// Settings a resumed run takes from the store (the rest of RunInfo holds seed, shard and limits).
// generator_config is the whole generator section as fuzz.yaml text; the single generator keys
// are what runs stored before it existed (a resume of one of those starts from this invocation's
// fuzz config, as it always did).
json options_json(const FuzzOptions& o) {
  const GeneratorConfig& g = o.generator;
  FuzzConfig whole;
  whole.generator = g;
  whole.campaign = {o.check.backends, g.cases};
  return {{"min_nodes", g.min_nodes},
          {"max_nodes", g.max_nodes},
          {"graph_cases", g.cases},
          {"allow_breaks", g.allow_breaks},
          {"allow_random", g.allow_random},
          {"special_values", g.special_values},
          {"device", g.device},
          {"generator_config", write_fuzz_config(whole)},
          {"fuzz_config_path", o.fuzz_config_path},
          {"timeout_s", o.check.limits.timeout_s},
          {"memory_bytes", o.check.limits.memory_bytes},
          {"reduce_checks", o.reduce_checks},
          {"kernel_batch", o.kernel_batch},
          {"inject_fault", o.check.backend_options.inject_fault},
          {"backends_config", o.backends_config},
          {"cache_dir", o.check.backend_options.cache_dir},
          {"use_cache", o.check.backend_options.use_cache}};
}

void apply_options_json(const json& j, const std::string& where, FuzzOptions& o) {
  GeneratorConfig& g = o.generator;
  if (j.contains("generator_config")) {
    FuzzConfig stored;
    read_fuzz_config(j.at("generator_config").get<std::string>(), where, true, stored);
    g = stored.generator;
    o.fuzz_config_path = j.at("fuzz_config_path").get<std::string>();
  } else {
    g.min_nodes = j.at("min_nodes").get<int>();
    g.max_nodes = j.at("max_nodes").get<int>();
    g.cases = j.at("graph_cases").get<int>();
    g.allow_breaks = j.at("allow_breaks").get<bool>();
    g.allow_random = j.at("allow_random").get<bool>();
    g.special_values = j.at("special_values").get<double>();
    g.device = j.at("device").get<std::string>();
  }
  o.check.limits.timeout_s = j.at("timeout_s").get<double>();
  o.check.limits.memory_bytes = j.at("memory_bytes").get<size_t>();
  o.reduce_checks = j.at("reduce_checks").get<int>();
  o.kernel_batch = j.value("kernel_batch", 0);  // runs stored before the prefetch had none
  o.check.backend_options.inject_fault = j.at("inject_fault").get<std::string>();
  o.backends_config = j.value("backends_config", "");  // runs stored before adapters have none
  o.check.backend_options.cache_dir = j.at("cache_dir").get<std::string>();
  o.check.backend_options.use_cache = j.at("use_cache").get<bool>();
}

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ",") + i;
  return s;
}

std::vector<std::string> split(const std::string& csv) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= csv.size()) {
    size_t end = csv.find(',', start);
    if (end == std::string::npos) end = csv.size();
    if (end > start) out.push_back(csv.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void validate(const FuzzOptions& o) {
  auto fail = [](const std::string& m) { throw std::invalid_argument(m); };
  if (o.out_dir.empty()) fail("--out is required");
  if (o.jobs < 1 || o.jobs > 256) fail("--jobs must be in [1, 256], got " + std::to_string(o.jobs));
  if (o.cases && *o.cases < 1) fail("--cases must be at least 1");
  if (o.time_s && !(*o.time_s > 0)) fail("--time must be positive");
  if (o.check.backends.empty()) fail("--backends names no backend");
  for (const auto& b : o.check.backends)
    if (!find_backend(b)) fail("unknown backend '" + b + "' (gbcheck check --help lists them)");
  if (o.reduce_checks < 0) fail("--reduce-checks must be >= 0");
  if (o.kernel_batch < 0) fail("--kernel-batch must be >= 0");
  validate_generator_config(o.generator);
}

GeneratorConfig graph_config(const FuzzOptions& o) {
  GeneratorConfig c = o.generator;
  c.backends = o.check.backends;
  return c;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct WorkerPlan {
  std::string db_path;
  RunInfo run;
  int job = 0;
  Clock::time_point start;
  double prior_active_s = 0;
};

ReproFolderOptions repro_options(const FuzzOptions& o) {
  ReproFolderOptions r;
  r.check = o.check;
  r.max_checks = o.reduce_checks;
  r.gen_args = generator_args(o);
  if (!o.check.backend_options.inject_fault.empty()) r.check_args = "--inject-fault " + o.check.backend_options.inject_fault;
  if (!o.backends_config.empty()) r.check_args += (r.check_args.empty() ? "" : " ") + std::string("--backends-config ") + o.backends_config;
  return r;
}

void reduce_into_store(FuzzStore& store, const FuzzOptions& o, const Model& model, const GraphFailure& f) {
  std::string rel = "repros/" + f.signature.hash();
  std::string state;
  try {
    state = write_repro_folder(model, f, (fs::path(o.out_dir) / rel).string(), repro_options(o));
  } catch (const std::exception& e) {
    std::cerr << "gbcheck fuzz: reducing " << f.hit.key << " failed: " << e.what() << "\n";
    state = "failed";
  }
  store.set_reduced(f.hit.key, state, rel);
}

// Reductions that a kill interrupted: regenerate the example graph and reduce it again.
void redo_pending_reductions(FuzzStore& store, const FuzzOptions& o, const RunInfo& run) {
  for (const SignatureInfo& s : store.pending_reductions()) {
    if (g_stop) return;
    if (s.first_run != run.uid) continue;
    Model model = generate_model(s.first_seed, graph_config(o));
    GraphVerdict v = check_graph(model, o.check);
    bool found = false;
    for (const GraphFailure& f : v.failures) {
      if (f.hit.key != s.key) continue;
      reduce_into_store(store, o, model, f);
      found = true;
    }
    if (!found) store.set_reduced(s.key, "failed", "");
  }
}

// The worker's next kernel_batch graphs from its n-th position on, generated, with their gbc
// kernels built together (kernel_prefetch.h); empty, and `enabled` false for the rest of the run,
// when the prefetch cannot help their checks (the run's backends, device and cache decide).
std::map<int64_t, Model> prefetch_batch(const FuzzOptions& o, const GeneratorConfig& config, const std::set<int64_t>& done,
                                        int job, int64_t n, bool& enabled) {
  std::vector<int64_t> positions;
  std::vector<Model> models;
  for (int64_t m = n; static_cast<int>(models.size()) < o.kernel_batch; ++m) {
    const int64_t k = o.shard.position(job, o.jobs, m);
    if (o.cases && k >= *o.cases) break;
    if (done.count(k)) continue;
    Model model = generate_model(o.seed + static_cast<uint64_t>(k), config);
    if (!kernel_prefetch_applies(o.check, model)) {
      enabled = false;
      return {};
    }
    positions.push_back(k);
    models.push_back(std::move(model));
  }
  const KernelPrefetch p = prefetch_kernels(models, o.check);
  if (trace::enabled())
    trace::emit("kernel_prefetch", {{"graphs", p.graphs}, {"kernels", p.kernels}, {"cached", p.kernels_cached},
                                    {"built", p.kernels_built}, {"ms", p.ms}, {"error", p.error}});
  std::map<int64_t, Model> batch;
  for (size_t i = 0; i < positions.size(); ++i) batch.emplace(positions[i], std::move(models[i]));
  return batch;
}

int worker_main(const FuzzOptions& o, const WorkerPlan& plan) {
  FuzzStore store(plan.db_path, false);
  if (plan.job == 0) redo_pending_reductions(store, o, plan.run);
  std::vector<int64_t> done_list = store.done_cases(plan.run.id);
  std::set<int64_t> done(done_list.begin(), done_list.end());
  GeneratorConfig config = graph_config(o);
  std::map<int64_t, Model> prefetched;  // the current batch's graphs, generated for the prefetch
  bool prefetch = o.kernel_batch > 1;
  for (int64_t n = 0; !g_stop; ++n) {
    int64_t k = o.shard.position(plan.job, o.jobs, n);
    if (o.cases && k >= *o.cases) break;
    if (o.time_s && plan.prior_active_s + seconds_since(plan.start) >= *o.time_s) break;
    if (done.count(k)) continue;
    uint64_t seed = o.seed + static_cast<uint64_t>(k);
    if (prefetch && prefetched.empty()) prefetched = prefetch_batch(o, config, done, plan.job, n, prefetch);
    auto ready = prefetched.find(k);
    Model model = ready != prefetched.end() ? std::move(ready->second) : generate_model(seed, config);
    if (ready != prefetched.end()) prefetched.erase(ready);
    GraphVerdict v = check_graph(model, o.check);
    CaseResult result;
    result.index = k;
    result.graph_seed = seed;
    result.outcome = v.outcome;
    result.nodes = static_cast<int>(model.graph.node_count());
    result.elapsed_ms = v.elapsed_ms;
    std::vector<Hit> hits;
    for (const GraphFailure& f : v.failures) hits.push_back(f.hit);
    std::vector<std::string> fresh = store.record_case(plan.run.id, result, hits, plan.prior_active_s + seconds_since(plan.start));
    if (trace::enabled()) {
      std::vector<std::string> keys;
      for (const Hit& h : hits) keys.push_back(h.key);
      trace::emit("fuzz_case", {{"case", k}, {"seed", seed}, {"outcome", v.outcome}, {"nodes", result.nodes},
                                {"elapsed_ms", v.elapsed_ms}, {"hits", keys}, {"new", fresh}});
    }
    for (const GraphFailure& f : v.failures) {
      if (g_stop) break;
      if (std::find(fresh.begin(), fresh.end(), f.hit.key) != fresh.end()) reduce_into_store(store, o, model, f);
    }
  }
  return 0;
}

FuzzTally tally(FuzzStore& store, const FuzzOptions& o, const RunInfo& run, int64_t cases_at_start,
                Clock::time_point start) {
  FuzzStore::Counts c = store.counts(run.id);
  FuzzTally t;
  t.cases = c.cases;
  t.failed = c.failed;
  t.invalid = c.invalid;
  t.signatures = c.signatures;
  t.new_signatures = store.db().scalar("SELECT count(*) FROM signatures WHERE status = 'new'").value_or(0);
  t.session_cases = c.cases - cases_at_start;
  t.session_s = seconds_since(start);
  t.elapsed_s = run.active_s + t.session_s;
  if (o.time_s) t.remaining_s = std::max(0.0, *o.time_s - t.elapsed_s);
  if (o.cases) t.cases_total = o.shard.owned(*o.cases);
  return t;
}

// Handlers for SIGINT and SIGTERM for the campaign's duration (the workers inherit them).
class StopSignals {
 public:
  StopSignals() {
    g_stop = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

}  // namespace

std::string generator_args(const FuzzOptions& o) {
  const GeneratorConfig& g = o.generator;
  const GeneratorConfig defaults = default_generator_config();
  // The file first: the options after it override its keys, as on the fuzz command line.
  std::string s = o.fuzz_config_path.empty() ? "" : "--fuzz-config " + o.fuzz_config_path + " ";
  s += "--min-nodes " + std::to_string(g.min_nodes) + " --max-nodes " + std::to_string(g.max_nodes) + " --cases " +
       std::to_string(g.cases) + " --backends " + join(o.check.backends);
  if (!g.allow_breaks) s += " --no-breaks";
  if (!g.allow_random) s += " --no-random";
  if (g.special_values != defaults.special_values) s += " --special-values " + std::to_string(g.special_values);
  if (g.device != defaults.device) s += " --device " + g.device;
  return s;
}

FuzzResult run_fuzz(FuzzOptions o) {
  fs::create_directories(o.out_dir);
  std::string db_path = (fs::path(o.out_dir) / FuzzStore::kFileName).string();
  FuzzStore store(db_path, true);
  RunInfo run;
  if (o.resume) {
    auto previous = store.resumable_run();
    if (!previous) throw std::invalid_argument("--resume: " + db_path + " has no unfinished run to continue");
    run = *previous;
    o.seed = run.seed;
    o.shard = Shard{run.shard_index, run.shard_count};
    o.cases = run.case_limit;
    o.time_s = run.time_limit_s;
    o.check.backends = split(run.backends);
    try {
      apply_options_json(json::parse(run.options), db_path + " (settings of run " + run.uid + ")", o);
    } catch (const json::exception& e) {
      throw StoreError(db_path + ": run " + run.uid + " has unreadable settings: " + e.what());
    } catch (const ConfigError& e) {
      throw StoreError(db_path + ": run " + run.uid + " has unreadable settings:\n" + e.diagnostics().str());
    }
    register_external_backends(o.backends_config);  // the adapters its backends may name
    validate(o);
    store.mark_running(run.id);
  } else {
    validate(o);
    RunInfo spec;
    spec.seed = o.seed;
    spec.shard_index = o.shard.index;
    spec.shard_count = o.shard.count;
    spec.case_limit = o.cases;
    spec.time_limit_s = o.time_s;
    spec.backends = join(o.check.backends);
    spec.options = options_json(o).dump();
    spec.gen_args = generator_args(o);
    run = store.begin_run(spec);
  }

  // Workers fork sandboxes from a process that runs ATen: it must stay single-threaded
  // (harness/sandbox/sandbox.h).
  at::set_num_threads(1);
  StopSignals signals;
  Clock::time_point start = Clock::now();
  int64_t cases_at_start = store.counts(run.id).cases;
  std::vector<pid_t> workers;
  const pid_t parent = ::getpid();
  for (int job = 0; job < o.jobs; ++job) {
    pid_t pid = ::fork();
    if (pid < 0) {
      for (pid_t w : workers) ::kill(w, SIGTERM);
      throw std::runtime_error("fork failed for worker " + std::to_string(job));
    }
    if (pid == 0) {
      // A worker outlives a killed parent only to finish its case in flight.
      ::prctl(PR_SET_PDEATHSIG, SIGTERM);
      if (::getppid() != parent) ::_exit(0);  // the parent died before prctl took effect
      int code = 3;
      try {
        code = worker_main(o, WorkerPlan{db_path, run, job, start, run.active_s});
      } catch (const std::exception& e) {
        std::cerr << "gbcheck fuzz: worker " << job << " failed: " << e.what() << "\n";
      }
      close_adapter_sessions();  // the worker leaves through _exit: its adapters' folders go now
      std::cerr.flush();
      dump_coverage();
      ::_exit(code);
    }
    workers.push_back(pid);
  }

  FuzzResult result;
  FuzzProgress progress(o.progress ? *o.progress : std::cerr, o.tty,
                        o.shard.count > 1 ? "fuzz " + o.shard.str() + ": " : "fuzz: ");
  bool forwarded = false;
  std::set<pid_t> running(workers.begin(), workers.end());
  while (!running.empty()) {
    for (pid_t pid : std::vector<pid_t>(running.begin(), running.end())) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) != pid) continue;
      running.erase(pid);
      if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        result.error += "worker " + std::to_string(pid) +
                        (WIFSIGNALED(status) ? " killed by signal " + std::to_string(WTERMSIG(status))
                                             : " exited with " + std::to_string(WEXITSTATUS(status))) + "; ";
      }
    }
    if (running.empty()) break;
    if (g_stop && !forwarded) {
      // Ctrl-C reaches the workers by itself; a SIGTERM to the parent does not.
      for (pid_t w : running) ::kill(w, SIGTERM);
      forwarded = true;
    }
    if (o.progress) progress.update(tally(store, o, run, cases_at_start, start));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (o.progress) progress.finish();

  result.interrupted = g_stop != 0;
  double active = run.active_s + seconds_since(start);
  store.finish_run(run.id, result.interrupted || !result.error.empty() ? "interrupted" : "finished", active);
  result.run = *store.run(run.id);
  result.counts = store.counts(run.id);
  result.new_signatures = store.db().scalar("SELECT count(*) FROM signatures WHERE status = 'new'").value_or(0);
  return result;
}

}  // namespace gbc
