// The fuzzer's SQLite store (DIR/fuzz.db): runs, the cases each run checked, and failure
// signatures with first/last seen, hit count, status (new/known/fixed) and repro folder.
// Durability: the database is in WAL mode and every case is one transaction (the case row, its
// signature hits and the run's clock together), so `kill -9` at any moment loses at most the case
// in flight, and a resumed run skips exactly the cases already recorded. Several processes (the
// --jobs workers) may write one store at once; SQLite serializes them.
// Generations: a run started on a store gets a generation one above every run already in it, so
// shards started from copies of the same store share a generation. A signature is `new` when first
// seen in its latest generation (or seen again after being marked fixed); starting a later
// generation turns earlier `new` ones into `known`. Schema: docs/fuzzing.md.
// Tested in tests/fuzz/fuzz_store_test.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/store/sqlite_db.h"

namespace gbc {

struct RunInfo {
  int64_t id = 0;
  std::string uid;  // random: a merge recognises a run present in two inputs
  int64_t generation = 0;
  std::string started_at, finished_at;  // UTC, ISO 8601
  std::string status;                   // running | finished | interrupted
  uint64_t seed = 0;
  int shard_index = 0;
  int shard_count = 1;
  std::optional<int64_t> case_limit;   // size of the seed space; nullopt: until time runs out
  std::optional<double> time_limit_s;  // nullopt: until the cases run out
  double active_s = 0;                 // time spent so far: a resumed run continues the clock
  std::string backends;                // "gbc,nnc"
  std::string options;                 // the rest of the configuration (JSON, written by the fuzzer)
  std::string gen_args;                // gbcheck-gen options that regenerate the run's graphs
  std::string host;
};

/// One checked graph.
struct CaseResult {
  int64_t index = 0;  // position in the seed space
  uint64_t graph_seed = 0;
  std::string outcome;  // pass | fail | invalid (the generator made a model eager cannot run)
  int nodes = 0;
  double elapsed_ms = 0;
};

/// A failure of a case, by signature.
struct Hit {
  std::string key;      // the signature: what makes two failures the same bug
  std::string kind;     // FailureSignature::kind_name (harness/reduce/failure_signature.h)
  std::string backend;
  std::string summary;  // one line for reports
  std::string detail;   // this case's specifics (worst element, message)
};

struct SignatureInfo {
  int64_t id = 0;
  std::string key, kind, backend, summary;
  std::string status;  // new | known | fixed
  std::string first_seen, last_seen;
  int64_t first_generation = 0, last_generation = 0;
  std::string first_run;  // uid of the run that found it
  int64_t first_case = 0;
  uint64_t first_seed = 0;
  int64_t hit_count = 0;
  std::string repro_path;    // relative to the store's folder; "" when none
  std::string reduce_state;  // pending | done | failed
};

struct CaseRow {
  std::string run_uid;
  int64_t index = 0;
  uint64_t graph_seed = 0;
  std::string outcome;
  std::vector<std::string> keys;  // signatures hit, sorted
};

class FuzzStore {
 public:
  static constexpr const char* kFileName = "fuzz.db";

  /// Opens the store at `path`, creating it (and its schema) when `create`. Throws StoreError
  /// for a file that cannot be opened or is not a gbcheck store of this schema version.
  explicit FuzzStore(const std::string& path, bool create = true);

  /// Starts a run: fills id, uid, generation, started_at and status ("running"), and turns the
  /// `new` signatures of earlier generations into `known`.
  RunInfo begin_run(RunInfo run);
  /// The latest run that did not finish (killed or interrupted), to continue with --resume.
  std::optional<RunInfo> resumable_run();
  void mark_running(int64_t run_id);
  void finish_run(int64_t run_id, const std::string& status, double active_s);
  std::optional<RunInfo> run(int64_t run_id);
  std::vector<RunInfo> runs();

  /// Indices of the seed space the run has recorded.
  std::vector<int64_t> done_cases(int64_t run_id);
  /// Records a case with its hits and the run's clock in one transaction. Returns the keys that
  /// became `new` with this case (first seen, or seen again after being marked fixed): the caller
  /// reduces those.
  std::vector<std::string> record_case(int64_t run_id, const CaseResult& result, const std::vector<Hit>& hits,
                                       double active_s);

  /// Records the outcome of reducing a signature: state done or failed, and its repro folder.
  void set_reduced(const std::string& key, const std::string& state, const std::string& repro_path);
  /// `new` signatures whose reduction has not run (the process was killed during it).
  std::vector<SignatureInfo> pending_reductions();
  /// Sets a signature's status by hand (`gbcheck db mark`); false when no signature has that key.
  bool set_status(const std::string& key, const std::string& status);

  std::vector<SignatureInfo> signatures();
  std::optional<SignatureInfo> signature(const std::string& key);
  std::vector<CaseRow> cases();

  struct Counts {
    int64_t cases = 0, failed = 0, invalid = 0, signatures = 0;
  };
  /// Counts for one run (signatures: distinct ones it hit), or for the whole store (run_id 0).
  Counts counts(int64_t run_id = 0);
  int64_t latest_generation();

  /// The folder holding the store: repro paths are relative to it.
  std::string folder() const;
  SqliteDb& db() { return *db_; }

 private:
  std::unique_ptr<SqliteDb> db_;
};

/// Current UTC time as "2026-11-23T11:30:05Z".
std::string utc_now();

}  // namespace gbc
