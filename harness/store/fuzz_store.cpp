#include "harness/store/fuzz_store.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <random>

namespace gbc {
namespace {

constexpr int kSchemaVersion = 1;

const char* kSchema = R"SQL(
CREATE TABLE IF NOT EXISTS runs(
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  generation INTEGER NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT,
  status TEXT NOT NULL CHECK(status IN ('running', 'finished', 'interrupted')),
  seed INTEGER NOT NULL,
  shard_index INTEGER NOT NULL,
  shard_count INTEGER NOT NULL,
  case_limit INTEGER,
  time_limit_s REAL,
  active_s REAL NOT NULL DEFAULT 0,
  backends TEXT NOT NULL,
  options TEXT NOT NULL,
  gen_args TEXT NOT NULL,
  host TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS cases(
  run_id INTEGER NOT NULL REFERENCES runs(id),
  idx INTEGER NOT NULL,
  graph_seed INTEGER NOT NULL,
  outcome TEXT NOT NULL CHECK(outcome IN ('pass', 'fail', 'invalid')),
  nodes INTEGER NOT NULL,
  elapsed_ms REAL NOT NULL,
  recorded_at TEXT NOT NULL,
  PRIMARY KEY(run_id, idx));
CREATE TABLE IF NOT EXISTS signatures(
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  backend TEXT NOT NULL,
  summary TEXT NOT NULL,
  status TEXT NOT NULL CHECK(status IN ('new', 'known', 'fixed')),
  first_seen TEXT NOT NULL,
  last_seen TEXT NOT NULL,
  first_generation INTEGER NOT NULL,
  last_generation INTEGER NOT NULL,
  first_run TEXT NOT NULL,
  first_case INTEGER NOT NULL,
  first_seed INTEGER NOT NULL,
  hit_count INTEGER NOT NULL,
  repro_path TEXT NOT NULL DEFAULT '',
  reduce_state TEXT NOT NULL DEFAULT 'pending' CHECK(reduce_state IN ('pending', 'done', 'failed')));
CREATE TABLE IF NOT EXISTS hits(
  run_id INTEGER NOT NULL REFERENCES runs(id),
  idx INTEGER NOT NULL,
  signature_id INTEGER NOT NULL REFERENCES signatures(id),
  detail TEXT NOT NULL,
  PRIMARY KEY(run_id, idx, signature_id));
)SQL";

std::string random_uid() {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd() ^ static_cast<uint64_t>(::getpid()));
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (int i = 0; i < 2; ++i) {
    uint64_t v = gen();
    for (int k = 0; k < 16; ++k, v >>= 4) out.push_back(hex[v & 15]);
  }
  return out;
}

std::string host_name() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string("unknown");
}

const char* kRunColumns =
    "id, uid, generation, started_at, finished_at, status, seed, shard_index, shard_count, case_limit, "
    "time_limit_s, active_s, backends, options, gen_args, host";

RunInfo read_run(const Statement& s) {
  RunInfo r;
  r.id = s.int64(0);
  r.uid = s.text(1);
  r.generation = s.int64(2);
  r.started_at = s.text(3);
  r.finished_at = s.text(4);
  r.status = s.text(5);
  r.seed = static_cast<uint64_t>(s.int64(6));
  r.shard_index = static_cast<int>(s.int64(7));
  r.shard_count = static_cast<int>(s.int64(8));
  if (!s.is_null(9)) r.case_limit = s.int64(9);
  if (!s.is_null(10)) r.time_limit_s = s.real(10);
  r.active_s = s.real(11);
  r.backends = s.text(12);
  r.options = s.text(13);
  r.gen_args = s.text(14);
  r.host = s.text(15);
  return r;
}

const char* kSignatureColumns =
    "id, key, kind, backend, summary, status, first_seen, last_seen, first_generation, last_generation, first_run, "
    "first_case, first_seed, hit_count, repro_path, reduce_state";

SignatureInfo read_signature(const Statement& s) {
  SignatureInfo g;
  g.id = s.int64(0);
  g.key = s.text(1);
  g.kind = s.text(2);
  g.backend = s.text(3);
  g.summary = s.text(4);
  g.status = s.text(5);
  g.first_seen = s.text(6);
  g.last_seen = s.text(7);
  g.first_generation = s.int64(8);
  g.last_generation = s.int64(9);
  g.first_run = s.text(10);
  g.first_case = s.int64(11);
  g.first_seed = static_cast<uint64_t>(s.int64(12));
  g.hit_count = s.int64(13);
  g.repro_path = s.text(14);
  g.reduce_state = s.text(15);
  return g;
}

}  // namespace

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

FuzzStore::FuzzStore(const std::string& path, bool create) {
  if (!create && !std::filesystem::exists(path)) throw StoreError(path + ": no such store");
  db_ = std::make_unique<SqliteDb>(path, create);
  // WAL: readers (progress, reports) never block the writer, and a killed writer leaves the
  // committed transactions intact. NORMAL sync loses nothing on a process crash.
  db_->exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;");
  auto version = db_->scalar("PRAGMA user_version");
  bool empty = db_->scalar("SELECT count(*) FROM sqlite_master").value_or(0) == 0;
  if (empty) {
    Transaction t(*db_);
    db_->exec(kSchema);
    db_->exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
    t.commit();
  } else if (version.value_or(0) != kSchemaVersion ||
             !db_->scalar("SELECT count(*) FROM sqlite_master WHERE name = 'signatures'").value_or(0)) {
    throw StoreError(path + ": not a gbcheck fuzz store of schema version " + std::to_string(kSchemaVersion));
  }
}

std::string FuzzStore::folder() const {
  return std::filesystem::absolute(db_->path()).parent_path().string();
}

int64_t FuzzStore::latest_generation() { return db_->scalar("SELECT max(generation) FROM runs").value_or(0); }

RunInfo FuzzStore::begin_run(RunInfo run) {
  Transaction t(*db_);
  run.uid = random_uid();
  run.generation = latest_generation() + 1;
  run.started_at = utc_now();
  run.status = "running";
  run.active_s = 0;
  if (run.host.empty()) run.host = host_name();
  Statement ins(*db_,
                "INSERT INTO runs(uid, generation, started_at, status, seed, shard_index, shard_count, case_limit, "
                "time_limit_s, backends, options, gen_args, host) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)");
  ins.bind(1, run.uid).bind(2, run.generation).bind(3, run.started_at).bind(4, run.status);
  ins.bind(5, static_cast<int64_t>(run.seed)).bind(6, static_cast<int64_t>(run.shard_index));
  ins.bind(7, static_cast<int64_t>(run.shard_count));
  if (run.case_limit) ins.bind(8, *run.case_limit);
  else ins.bind_null(8);
  if (run.time_limit_s) ins.bind(9, *run.time_limit_s);
  else ins.bind_null(9);
  ins.bind(10, run.backends).bind(11, run.options).bind(12, run.gen_args).bind(13, run.host);
  ins.run();
  run.id = db_->last_insert_id();
  Statement age(*db_, "UPDATE signatures SET status = 'known' WHERE status = 'new' AND last_generation < ?1");
  age.bind(1, run.generation).run();
  t.commit();
  return run;
}

std::optional<RunInfo> FuzzStore::resumable_run() {
  Statement s(*db_, std::string("SELECT ") + kRunColumns +
                        " FROM runs WHERE status IN ('running', 'interrupted') ORDER BY id DESC LIMIT 1");
  if (!s.step()) return std::nullopt;
  return read_run(s);
}

void FuzzStore::mark_running(int64_t run_id) {
  Statement s(*db_, "UPDATE runs SET status = 'running', finished_at = NULL WHERE id = ?1");
  s.bind(1, run_id).run();
}

void FuzzStore::finish_run(int64_t run_id, const std::string& status, double active_s) {
  Statement s(*db_, "UPDATE runs SET status = ?2, finished_at = ?3, active_s = max(active_s, ?4) WHERE id = ?1");
  s.bind(1, run_id).bind(2, status).bind(3, utc_now()).bind(4, active_s).run();
}

std::optional<RunInfo> FuzzStore::run(int64_t run_id) {
  Statement s(*db_, std::string("SELECT ") + kRunColumns + " FROM runs WHERE id = ?1");
  s.bind(1, run_id);
  if (!s.step()) return std::nullopt;
  return read_run(s);
}

std::vector<RunInfo> FuzzStore::runs() {
  Statement s(*db_, std::string("SELECT ") + kRunColumns + " FROM runs ORDER BY id");
  std::vector<RunInfo> out;
  while (s.step()) out.push_back(read_run(s));
  return out;
}

std::vector<int64_t> FuzzStore::done_cases(int64_t run_id) {
  Statement s(*db_, "SELECT idx FROM cases WHERE run_id = ?1 ORDER BY idx");
  s.bind(1, run_id);
  std::vector<int64_t> out;
  while (s.step()) out.push_back(s.int64(0));
  return out;
}

std::vector<std::string> FuzzStore::record_case(int64_t run_id, const CaseResult& result, const std::vector<Hit>& hits,
                                                double active_s) {
  std::vector<std::string> fresh;
  Transaction t(*db_);
  auto info = run(run_id);
  if (!info) throw StoreError(db_->path() + ": no run " + std::to_string(run_id));
  std::string now = utc_now();
  Statement ins(*db_,
                "INSERT OR REPLACE INTO cases(run_id, idx, graph_seed, outcome, nodes, elapsed_ms, recorded_at) "
                "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  ins.bind(1, run_id).bind(2, result.index).bind(3, static_cast<int64_t>(result.graph_seed)).bind(4, result.outcome);
  ins.bind(5, static_cast<int64_t>(result.nodes)).bind(6, result.elapsed_ms).bind(7, now).run();
  for (const Hit& h : hits) {
    auto existing = signature(h.key);
    int64_t id = 0;
    if (!existing) {
      Statement add(*db_,
                    "INSERT INTO signatures(key, kind, backend, summary, status, first_seen, last_seen, first_generation, "
                    "last_generation, first_run, first_case, first_seed, hit_count) "
                    "VALUES(?1, ?2, ?3, ?4, 'new', ?5, ?5, ?6, ?6, ?7, ?8, ?9, 0)");
      add.bind(1, h.key).bind(2, h.kind).bind(3, h.backend).bind(4, h.summary).bind(5, now);
      add.bind(6, info->generation).bind(7, info->uid).bind(8, result.index);
      add.bind(9, static_cast<int64_t>(result.graph_seed)).run();
      id = db_->last_insert_id();
      fresh.push_back(h.key);
    } else {
      id = existing->id;
      // A fixed bug seen again is a regression: new again, and reduced again from this case.
      bool regression = existing->status == "fixed";
      Statement upd(*db_,
                    "UPDATE signatures SET last_seen = ?2, last_generation = max(last_generation, ?3), "
                    "status = CASE WHEN status = 'fixed' THEN 'new' ELSE status END, "
                    "reduce_state = CASE WHEN status = 'fixed' THEN 'pending' ELSE reduce_state END WHERE id = ?1");
      upd.bind(1, id).bind(2, now).bind(3, info->generation).run();
      if (regression) fresh.push_back(h.key);
    }
    Statement hit(*db_, "INSERT OR IGNORE INTO hits(run_id, idx, signature_id, detail) VALUES(?1, ?2, ?3, ?4)");
    hit.bind(1, run_id).bind(2, result.index).bind(3, id).bind(4, h.detail).run();
    if (db_->changes() > 0) {
      Statement count(*db_, "UPDATE signatures SET hit_count = hit_count + 1 WHERE id = ?1");
      count.bind(1, id).run();
    }
  }
  Statement clock(*db_, "UPDATE runs SET active_s = max(active_s, ?2) WHERE id = ?1");
  clock.bind(1, run_id).bind(2, active_s).run();
  t.commit();
  return fresh;
}

void FuzzStore::set_reduced(const std::string& key, const std::string& state, const std::string& repro_path) {
  Statement s(*db_, "UPDATE signatures SET reduce_state = ?2, repro_path = ?3 WHERE key = ?1");
  s.bind(1, key).bind(2, state).bind(3, repro_path).run();
}

std::vector<SignatureInfo> FuzzStore::pending_reductions() {
  Statement s(*db_, std::string("SELECT ") + kSignatureColumns +
                        " FROM signatures WHERE status = 'new' AND reduce_state = 'pending' ORDER BY id");
  std::vector<SignatureInfo> out;
  while (s.step()) out.push_back(read_signature(s));
  return out;
}

bool FuzzStore::set_status(const std::string& key, const std::string& status) {
  Statement s(*db_, "UPDATE signatures SET status = ?2 WHERE key = ?1");
  s.bind(1, key).bind(2, status).run();
  return db_->changes() > 0;
}

std::vector<SignatureInfo> FuzzStore::signatures() {
  Statement s(*db_, std::string("SELECT ") + kSignatureColumns + " FROM signatures ORDER BY id");
  std::vector<SignatureInfo> out;
  while (s.step()) out.push_back(read_signature(s));
  return out;
}

std::optional<SignatureInfo> FuzzStore::signature(const std::string& key) {
  Statement s(*db_, std::string("SELECT ") + kSignatureColumns + " FROM signatures WHERE key = ?1");
  s.bind(1, key);
  if (!s.step()) return std::nullopt;
  return read_signature(s);
}

std::vector<CaseRow> FuzzStore::cases() {
  Statement s(*db_,
              "SELECT r.uid, c.idx, c.graph_seed, c.outcome, g.key FROM cases c JOIN runs r ON r.id = c.run_id "
              "LEFT JOIN hits h ON h.run_id = c.run_id AND h.idx = c.idx LEFT JOIN signatures g ON g.id = h.signature_id "
              "ORDER BY r.id, c.idx, g.key");
  std::vector<CaseRow> out;
  while (s.step()) {
    std::string uid = s.text(0);
    int64_t idx = s.int64(1);
    if (out.empty() || out.back().run_uid != uid || out.back().index != idx) {
      CaseRow row;
      row.run_uid = uid;
      row.index = idx;
      row.graph_seed = static_cast<uint64_t>(s.int64(2));
      row.outcome = s.text(3);
      out.push_back(row);
    }
    if (!s.is_null(4)) out.back().keys.push_back(s.text(4));
  }
  return out;
}

FuzzStore::Counts FuzzStore::counts(int64_t run_id) {
  std::string where = run_id ? " WHERE run_id = " + std::to_string(run_id) : "";
  std::string and_run = run_id ? " AND run_id = " + std::to_string(run_id) : "";
  Counts c;
  c.cases = db_->scalar("SELECT count(*) FROM cases" + where).value_or(0);
  c.failed = db_->scalar("SELECT count(*) FROM cases WHERE outcome = 'fail'" + and_run).value_or(0);
  c.invalid = db_->scalar("SELECT count(*) FROM cases WHERE outcome = 'invalid'" + and_run).value_or(0);
  c.signatures = db_->scalar("SELECT count(DISTINCT signature_id) FROM hits" + where).value_or(0);
  return c;
}

}  // namespace gbc
