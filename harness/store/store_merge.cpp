#include "harness/store/store_merge.h"

#include <filesystem>
#include <map>
#include <memory>

#include "harness/store/fuzz_store.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

int status_rank(const std::string& status) { return status == "new" ? 2 : status == "fixed" ? 1 : 0; }

// A repro path of `from` (relative to its folder) as seen from `to`'s folder.
std::string rebase(const std::string& path, const std::string& from_folder, const std::string& to_folder) {
  if (path.empty()) return path;
  fs::path abs = fs::path(path).is_absolute() ? fs::path(path) : fs::path(from_folder) / path;
  return fs::relative(abs.lexically_normal(), to_folder).string();
}

}  // namespace

MergeSummary merge_stores(const std::string& out_path, const std::vector<std::string>& inputs) {
  MergeSummary summary;
  // Every input is opened before OUT is created: a missing or invalid input leaves no empty store.
  std::vector<std::unique_ptr<FuzzStore>> opened;
  for (const std::string& in_path : inputs) {
    if (fs::exists(in_path) && fs::exists(out_path) && fs::equivalent(in_path, out_path))
      throw StoreError(in_path + ": cannot merge a store into itself");
    opened.push_back(std::make_unique<FuzzStore>(in_path, false));
  }
  FuzzStore out(out_path, true);
  SqliteDb& db = out.db();
  for (const auto& input : opened) {
    FuzzStore& in = *input;
    Transaction t(db);
    // Runs, by uid.
    std::map<int64_t, int64_t> run_ids;  // input id -> output id
    for (const RunInfo& r : in.runs()) {
      Statement find(db, "SELECT id FROM runs WHERE uid = ?1");
      find.bind(1, r.uid);
      if (find.step()) {
        run_ids[r.id] = find.int64(0);
        // The same run in two inputs: keep the furthest state of it.
        Statement upd(db,
                      "UPDATE runs SET active_s = max(active_s, ?2), "
                      "status = CASE WHEN ?3 = 'finished' THEN 'finished' ELSE status END, "
                      "finished_at = coalesce(finished_at, ?4) WHERE id = ?1");
        upd.bind(1, run_ids[r.id]).bind(2, r.active_s).bind(3, r.status);
        upd.bind(4, r.finished_at.empty() ? std::optional<std::string>() : std::optional<std::string>(r.finished_at));
        upd.run();
        continue;
      }
      Statement ins(db,
                    "INSERT INTO runs(uid, generation, started_at, finished_at, status, seed, shard_index, shard_count, "
                    "case_limit, time_limit_s, active_s, backends, options, gen_args, host) "
                    "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
      ins.bind(1, r.uid).bind(2, r.generation).bind(3, r.started_at);
      ins.bind(4, r.finished_at.empty() ? std::optional<std::string>() : std::optional<std::string>(r.finished_at));
      ins.bind(5, r.status).bind(6, static_cast<int64_t>(r.seed)).bind(7, static_cast<int64_t>(r.shard_index));
      ins.bind(8, static_cast<int64_t>(r.shard_count));
      if (r.case_limit) ins.bind(9, *r.case_limit);
      else ins.bind_null(9);
      if (r.time_limit_s) ins.bind(10, *r.time_limit_s);
      else ins.bind_null(10);
      ins.bind(11, r.active_s).bind(12, r.backends).bind(13, r.options).bind(14, r.gen_args).bind(15, r.host).run();
      run_ids[r.id] = db.last_insert_id();
      ++summary.runs_added;
    }
    // Signatures, by key.
    std::map<int64_t, int64_t> sig_ids;
    for (const SignatureInfo& g : in.signatures()) {
      std::string repro = rebase(g.repro_path, in.folder(), out.folder());
      auto mine = out.signature(g.key);
      if (!mine) {
        Statement ins(db,
                      "INSERT INTO signatures(key, kind, backend, summary, status, first_seen, last_seen, "
                      "first_generation, last_generation, first_run, first_case, first_seed, hit_count, repro_path, "
                      "reduce_state) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 0, ?13, ?14)");
        ins.bind(1, g.key).bind(2, g.kind).bind(3, g.backend).bind(4, g.summary).bind(5, g.status);
        ins.bind(6, g.first_seen).bind(7, g.last_seen).bind(8, g.first_generation).bind(9, g.last_generation);
        ins.bind(10, g.first_run).bind(11, g.first_case).bind(12, static_cast<int64_t>(g.first_seed));
        ins.bind(13, repro).bind(14, g.reduce_state).run();
        sig_ids[g.id] = db.last_insert_id();
        ++summary.signatures_added;
        continue;
      }
      sig_ids[g.id] = mine->id;
      // The input that saw it first supplies the example and its repro (ties: the one reduced).
      bool earlier = std::make_pair(g.first_generation, g.first_seen) < std::make_pair(mine->first_generation, mine->first_seen) ||
                     (mine->reduce_state != "done" && g.reduce_state == "done");
      std::string status = status_rank(g.status) > status_rank(mine->status) ? g.status : mine->status;
      Statement upd(db,
                    "UPDATE signatures SET status = ?2, first_seen = min(first_seen, ?3), last_seen = max(last_seen, ?4), "
                    "first_generation = min(first_generation, ?5), last_generation = max(last_generation, ?6) "
                    "WHERE id = ?1");
      upd.bind(1, mine->id).bind(2, status).bind(3, g.first_seen).bind(4, g.last_seen);
      upd.bind(5, g.first_generation).bind(6, g.last_generation).run();
      if (earlier) {
        Statement ex(db,
                     "UPDATE signatures SET first_run = ?2, first_case = ?3, first_seed = ?4, repro_path = ?5, "
                     "reduce_state = ?6 WHERE id = ?1");
        ex.bind(1, mine->id).bind(2, g.first_run).bind(3, g.first_case).bind(4, static_cast<int64_t>(g.first_seed));
        ex.bind(5, repro).bind(6, g.reduce_state).run();
      }
    }
    // Cases and hits, by (run, index).
    {
      Statement read(in.db(), "SELECT run_id, idx, graph_seed, outcome, nodes, elapsed_ms, recorded_at FROM cases");
      Statement ins(db,
                    "INSERT OR IGNORE INTO cases(run_id, idx, graph_seed, outcome, nodes, elapsed_ms, recorded_at) "
                    "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)");
      while (read.step()) {
        ins.bind(1, run_ids.at(read.int64(0))).bind(2, read.int64(1)).bind(3, read.int64(2)).bind(4, read.text(3));
        ins.bind(5, read.int64(4)).bind(6, read.real(5)).bind(7, read.text(6));
        ins.run();
        summary.cases_added += db.changes();
      }
    }
    {
      Statement read(in.db(), "SELECT run_id, idx, signature_id, detail FROM hits");
      Statement ins(db, "INSERT OR IGNORE INTO hits(run_id, idx, signature_id, detail) VALUES(?1, ?2, ?3, ?4)");
      while (read.step()) {
        ins.bind(1, run_ids.at(read.int64(0))).bind(2, read.int64(1)).bind(3, sig_ids.at(read.int64(2)));
        ins.bind(4, read.text(3)).run();
      }
    }
    db.exec("UPDATE signatures SET hit_count = (SELECT count(*) FROM hits WHERE hits.signature_id = signatures.id)");
    t.commit();
  }
  return summary;
}

}  // namespace gbc
