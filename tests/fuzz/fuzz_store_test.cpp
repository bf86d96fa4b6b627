// Tests of the fuzzer's SQLite store (harness/store): recording and resuming runs, signature
// statuses across generations, durability under kill -9, merging shard stores, and the report
// with its JUnit XML.
#include "harness/store/fuzz_store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "harness/store/store_merge.h"
#include "harness/store/store_report.h"
#include "compiler/support/file_tree.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

class FuzzStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gbcheck-store-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    { std::error_code ignored; remove_tree(fs::path(dir_).string(), ignored); }
    fs::create_directories(dir_);
  }
  void TearDown() override { { std::error_code ignored; remove_tree(fs::path(dir_).string(), ignored); } }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  static RunInfo run_spec(int shard = 0, int shards = 1) {
    RunInfo r;
    r.seed = 100;
    r.shard_index = shard;
    r.shard_count = shards;
    r.case_limit = 50;
    r.backends = "gbc";
    r.options = "{}";
    r.gen_args = "--max-nodes 20";
    return r;
  }
  static CaseResult result(int64_t index, const std::string& outcome) {
    CaseResult c;
    c.index = index;
    c.graph_seed = 100 + static_cast<uint64_t>(index);
    c.outcome = outcome;
    c.nodes = 12;
    c.elapsed_ms = 30;
    return c;
  }
  static Hit hit(const std::string& key) { return {key, "mismatch", "gbc", "gbc differs from eager at " + key, "case detail"}; }

  fs::path dir_;
};

TEST_F(FuzzStoreTest, RecordsCasesAndCountsSignatureHits) {
  {
    FuzzStore store(path("fuzz.db"));
    RunInfo run = store.begin_run(run_spec());
    EXPECT_EQ(run.generation, 1);
    EXPECT_EQ(run.status, "running");
    EXPECT_EQ(store.record_case(run.id, result(0, "pass"), {}, 1.0), std::vector<std::string>{});
    EXPECT_EQ(store.record_case(run.id, result(1, "fail"), {hit("gbc|sum")}, 2.0), std::vector<std::string>{"gbc|sum"});
    EXPECT_EQ(store.record_case(run.id, result(2, "fail"), {hit("gbc|sum"), hit("gbc|exp")}, 3.0),
              std::vector<std::string>{"gbc|exp"});
    store.finish_run(run.id, "finished", 4.0);
  }
  FuzzStore store(path("fuzz.db"), false);  // reopened: everything was committed
  auto counts = store.counts();
  EXPECT_EQ(counts.cases, 3);
  EXPECT_EQ(counts.failed, 2);
  EXPECT_EQ(counts.signatures, 2);
  auto sum = store.signature("gbc|sum");
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->hit_count, 2);
  EXPECT_EQ(sum->status, "new");
  EXPECT_EQ(sum->first_case, 1);
  EXPECT_EQ(sum->first_seed, 101u);
  EXPECT_EQ(sum->reduce_state, "pending");
  auto runs = store.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, "finished");
  EXPECT_DOUBLE_EQ(runs[0].active_s, 4.0);
  EXPECT_EQ(runs[0].gen_args, "--max-nodes 20");
  EXPECT_FALSE(store.resumable_run());
  auto rows = store.cases();
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].keys, (std::vector<std::string>{"gbc|exp", "gbc|sum"}));
}

TEST_F(FuzzStoreTest, ResumableRunKeepsItsDoneCases) {
  FuzzStore store(path("fuzz.db"));
  RunInfo run = store.begin_run(run_spec());
  for (int64_t i : {0, 1, 3}) store.record_case(run.id, result(i, "pass"), {}, 5.0);
  auto again = store.resumable_run();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->id, run.id);
  EXPECT_EQ(again->seed, 100u);
  EXPECT_EQ(again->case_limit, 50);
  EXPECT_DOUBLE_EQ(again->active_s, 5.0);
  EXPECT_EQ(store.done_cases(run.id), (std::vector<int64_t>{0, 1, 3}));
}

TEST_F(FuzzStoreTest, StatusesFollowGenerations) {
  FuzzStore store(path("fuzz.db"));
  RunInfo first = store.begin_run(run_spec());
  store.record_case(first.id, result(0, "fail"), {hit("a")}, 1);
  store.record_case(first.id, result(1, "fail"), {hit("b")}, 1);
  store.finish_run(first.id, "finished", 1);
  RunInfo second = store.begin_run(run_spec());
  EXPECT_EQ(second.generation, 2);
  EXPECT_EQ(store.signature("a")->status, "known");
  ASSERT_TRUE(store.set_status("b", "fixed"));
  EXPECT_FALSE(store.set_status("no-such-key", "fixed"));
  EXPECT_EQ(store.record_case(second.id, result(0, "fail"), {hit("a")}, 1), std::vector<std::string>{});
  // A fixed bug seen again is a regression: new again, to be reduced again.
  EXPECT_EQ(store.record_case(second.id, result(1, "fail"), {hit("b")}, 1), std::vector<std::string>{"b"});
  EXPECT_EQ(store.signature("b")->status, "new");
  EXPECT_EQ(store.signature("b")->first_generation, 1);
  EXPECT_EQ(store.signature("b")->last_generation, 2);
  EXPECT_EQ(store.signature("a")->status, "known");
  EXPECT_EQ(store.signature("a")->hit_count, 2);
  ASSERT_EQ(store.pending_reductions().size(), 1u);
  store.set_reduced("b", "done", "repros/b");
  EXPECT_TRUE(store.pending_reductions().empty());
  EXPECT_EQ(store.signature("b")->repro_path, "repros/b");
}

TEST_F(FuzzStoreTest, RejectsAFileThatIsNotAStore) {
  {
    SqliteDb other(path("other.db"), true);
    other.exec("CREATE TABLE t(x)");
  }
  EXPECT_THROW(FuzzStore(path("other.db"), false), StoreError);
  EXPECT_THROW(FuzzStore(path("missing.db"), false), StoreError);
}

// A writer killed with SIGKILL at an arbitrary moment leaves a consistent store: every case it
// recorded is there with all its hits, and only the case in flight is missing.
TEST_F(FuzzStoreTest, KillNineLosesAtMostTheCaseInFlight) {
  std::string db = path("fuzz.db");
  int64_t run_id = 0;
  {
    FuzzStore store(db);
    run_id = store.begin_run(run_spec()).id;
  }
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    FuzzStore store(db, false);
    for (int64_t i = 0;; ++i)
      store.record_case(run_id, result(i, i % 3 ? "pass" : "fail"),
                        i % 3 ? std::vector<Hit>{} : std::vector<Hit>{hit("k" + std::to_string(i % 4)), hit("all")}, 1);
  }
  {
    FuzzStore watcher(db, false);
    for (int tries = 0; tries < 2000 && watcher.counts(run_id).cases < 40; ++tries)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));

  FuzzStore store(db, false);
  EXPECT_EQ(store.db().scalar("SELECT count(*) FROM pragma_integrity_check WHERE integrity_check != 'ok'"), 0);
  std::vector<int64_t> done = store.done_cases(run_id);
  ASSERT_GE(done.size(), 40u);
  for (size_t i = 0; i < done.size(); ++i) ASSERT_EQ(done[i], static_cast<int64_t>(i));
  int64_t fails = static_cast<int64_t>((done.size() + 2) / 3);
  EXPECT_EQ(store.signature("all")->hit_count, fails);
  EXPECT_EQ(store.db().scalar("SELECT count(*) FROM hits"), 2 * fails);
  ASSERT_TRUE(store.resumable_run());
  EXPECT_EQ(store.resumable_run()->id, run_id);
}

TEST_F(FuzzStoreTest, MergeCombinesShardsOnceAndRebasesRepros) {
  fs::create_directories(dir_ / "s0");
  fs::create_directories(dir_ / "s1");
  fs::create_directories(dir_ / "merged");
  {
    FuzzStore s0(path("s0/fuzz.db"));
    RunInfo r = s0.begin_run(run_spec(0, 2));
    s0.record_case(r.id, result(0, "fail"), {hit("shared"), hit("only0")}, 1);
    s0.record_case(r.id, result(2, "pass"), {}, 1);
    s0.set_reduced("shared", "done", "repros/shared");
    s0.finish_run(r.id, "finished", 1);
    FuzzStore s1(path("s1/fuzz.db"));
    RunInfo q = s1.begin_run(run_spec(1, 2));
    s1.record_case(q.id, result(1, "fail"), {hit("shared")}, 1);
    s1.record_case(q.id, result(3, "fail"), {hit("shared")}, 1);
    s1.finish_run(q.id, "finished", 1);
  }
  MergeSummary m = merge_stores(path("merged/fuzz.db"), {path("s0/fuzz.db"), path("s1/fuzz.db")});
  EXPECT_EQ(m.runs_added, 2);
  EXPECT_EQ(m.cases_added, 4);
  EXPECT_EQ(m.signatures_added, 2);
  // Merging an input again adds nothing.
  MergeSummary again = merge_stores(path("merged/fuzz.db"), {path("s1/fuzz.db")});
  EXPECT_EQ(again.runs_added + again.cases_added + again.signatures_added, 0);
  FuzzStore merged(path("merged/fuzz.db"), false);
  EXPECT_EQ(merged.counts().cases, 4);
  EXPECT_EQ(merged.counts().failed, 3);
  auto shared = merged.signature("shared");
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->hit_count, 3);
  EXPECT_EQ(shared->status, "new");
  EXPECT_EQ(shared->reduce_state, "done");
  EXPECT_EQ(shared->repro_path, "../s0/repros/shared");
  EXPECT_EQ(merged.signature("only0")->hit_count, 1);
  EXPECT_THROW(merge_stores(path("merged/fuzz.db"), {path("merged/fuzz.db")}), StoreError);
}

// `db merge OUT missing` once failed after creating OUT: an empty store was left behind.
TEST_F(FuzzStoreTest, MergeOfAMissingInputLeavesNoStore) {
  { FuzzStore present(path("present.db")); }
  EXPECT_THROW(merge_stores(path("out.db"), {path("present.db"), path("missing.db")}), StoreError);
  EXPECT_FALSE(fs::exists(path("out.db")));
  merge_stores(path("out.db"), {path("present.db")});
  EXPECT_TRUE(fs::exists(path("out.db")));
}

TEST_F(FuzzStoreTest, ReportListsNewSignaturesAsFailedJUnitTests) {
  FuzzStore store(path("fuzz.db"));
  RunInfo first = store.begin_run(run_spec());
  store.record_case(first.id, result(0, "fail"), {hit("old")}, 1);
  store.finish_run(first.id, "finished", 1);
  RunInfo second = store.begin_run(run_spec());
  store.record_case(second.id, result(0, "fail"), {hit("old")}, 1);
  store.record_case(second.id, result(1, "fail"), {hit("gbc|<tolerance> & \"sum\"")}, 1);
  StoreReport report = build_store_report(store);
  ASSERT_EQ(report.fresh.size(), 1u);
  ASSERT_EQ(report.known.size(), 1u);
  EXPECT_FALSE(report.clean());
  std::ostringstream text;
  print_store_report(report, text);
  EXPECT_NE(text.str().find("new since the previous run: 1 signature (by backend: gbc 1)\n"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("gbcheck-gen --seed 101 --count 1 --max-nodes 20 --out DIR"), std::string::npos) << text.str();
  std::string xml = store_report_junit(report);
  EXPECT_NE(xml.find("<testsuites name=\"gbcheck fuzz\" tests=\"3\" failures=\"1\" skipped=\"1\">"), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"gbc|&lt;tolerance&gt; &amp; &quot;sum&quot;\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<skipped message=\"known bug, seen again\"/>"), std::string::npos) << xml;
}

// A run made with --inject-fault found planted bugs: the text report and the JUnit say so, and the
// replay line plants the same fault (without it the replay passes).
TEST_F(FuzzStoreTest, ReportOfAFaultInjectedRunSaysSoAndReplaysTheFault) {
  FuzzStore store(path("fuzz.db"));
  RunInfo spec = run_spec();
  spec.options = R"({"inject_fault": "const", "reduce_checks": 0})";
  RunInfo run = store.begin_run(spec);
  store.record_case(run.id, result(0, "fail"), {hit("gbc|tolerance")}, 1);
  StoreReport report = build_store_report(store);
  EXPECT_EQ(injected_fault(report.runs.at(0)), "const");
  std::ostringstream text;
  print_store_report(report, text);
  EXPECT_EQ(text.str().rfind("*** FAULT INJECTION WAS ACTIVE (--inject-fault const)", 0), 0u) << text.str();
  EXPECT_NE(text.str().find("--backend gbc --inject-fault const\n"), std::string::npos) << text.str();
  std::string xml = store_report_junit(report);
  EXPECT_NE(xml.find("<property name=\"fault_injection\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("--inject-fault const\n"), std::string::npos) << xml;

  FuzzStore plain(path("plain.db"));
  RunInfo clean = plain.begin_run(run_spec());
  plain.record_case(clean.id, result(0, "fail"), {hit("gbc|tolerance")}, 1);
  std::ostringstream plain_text;
  print_store_report(build_store_report(plain), plain_text);
  EXPECT_EQ(plain_text.str().find("FAULT"), std::string::npos) << plain_text.str();
  EXPECT_EQ(plain_text.str().find("--inject-fault"), std::string::npos) << plain_text.str();
}

// A campaign over several backends (`fuzz --backends gbc,ts-freeze,nnc-py`): the report names
// each signature's backend and counts them per backend, and replay lines of a run whose adapters
// came from --backends-config name that file.
TEST_F(FuzzStoreTest, ReportShowsEachSignaturesBackend) {
  FuzzStore store(path("fuzz.db"));
  RunInfo spec = run_spec();
  spec.backends = "gbc,ts-freeze,nnc-py";
  spec.options = R"({"backends_config": "/work/my-backends.yaml", "reduce_checks": 0})";
  RunInfo run = store.begin_run(spec);
  auto adapter_hit = [](const std::string& backend, const std::string& key) {
    return Hit{key, "error", backend, backend + " raised", "case detail"};
  };
  store.record_case(run.id, result(0, "fail"), {hit("gbc divergence tolerance [sum]"), adapter_hit("ts-freeze", "ts-freeze error x")}, 1);
  store.record_case(run.id, result(1, "fail"), {adapter_hit("ts-freeze", "ts-freeze error y")}, 1);
  StoreReport report = build_store_report(store);
  std::ostringstream text;
  print_store_report(report, text);
  EXPECT_NE(text.str().find("new since the previous run: 3 signatures (by backend: gbc 1, ts-freeze 2)\n"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("  ts-freeze error y\n    backend: ts-freeze\n"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find(".yaml --backend ts-freeze --backends-config /work/my-backends.yaml\n"), std::string::npos) << text.str();
}

}  // namespace
}  // namespace gbc
