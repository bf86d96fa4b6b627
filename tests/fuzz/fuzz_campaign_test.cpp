// Tests of the fuzz campaign (harness/fuzz/campaign): the sharded seed space, durations, progress
// lines, and end to end on tiny campaigns against gbc-interp with an injected fault (so that there
// are failures to deduplicate): 4 shards merged equal one run over the same seeds, and a run killed
// with SIGKILL continues with --resume to the same set of cases.
#include "harness/fuzz/campaign/fuzz_campaign.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "harness/fuzz/campaign/duration.h"
#include "harness/fuzz/campaign/fuzz_progress.h"
#include "harness/fuzz/fuzz_config.h"
#include "harness/store/store_merge.h"
#include "compiler/support/file_tree.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;

TEST(ShardTest, ParsesAndRejects) {
  Shard s = Shard::parse("2/4");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.str(), "2/4");
  EXPECT_EQ(s.owned(12), 3);
  EXPECT_EQ(s.owned(11), 3);
  EXPECT_EQ(s.owned(10), 2);
  EXPECT_EQ(s.owned(2), 0);
  for (const char* bad : {"4/4", "1/0", "-1/4", "1", "/4", "1/", "a/b", "1/4/2", "1 /4"})
    EXPECT_THROW(Shard::parse(bad), std::invalid_argument) << bad;
}

// Shards and their jobs partition the seed space: every position once.
TEST(ShardTest, ShardsAndJobsPartitionTheSeedSpace) {
  const int64_t space = 100;
  for (int shards : {1, 3, 4}) {
    for (int jobs : {1, 2, 5}) {
      std::map<int64_t, int> seen;
      for (int i = 0; i < shards; ++i)
        for (int j = 0; j < jobs; ++j)
          for (int64_t n = 0;; ++n) {
            int64_t k = Shard{i, shards}.position(j, jobs, n);
            if (k >= space) break;
            ++seen[k];
          }
      ASSERT_EQ(seen.size(), static_cast<size_t>(space)) << shards << " shards, " << jobs << " jobs";
      for (const auto& [k, count] : seen) EXPECT_EQ(count, 1) << "position " << k;
    }
  }
}

TEST(DurationTest, ParsesUnits) {
  EXPECT_DOUBLE_EQ(parse_duration("8h"), 8 * 3600);
  EXPECT_DOUBLE_EQ(parse_duration("90m"), 5400);
  EXPECT_DOUBLE_EQ(parse_duration("1h30m"), 5400);
  EXPECT_DOUBLE_EQ(parse_duration("1h2m3s"), 3723);
  EXPECT_DOUBLE_EQ(parse_duration("45s"), 45);
  EXPECT_DOUBLE_EQ(parse_duration("300"), 300);
  EXPECT_DOUBLE_EQ(parse_duration("0.5h"), 1800);
  for (const char* bad : {"", "0", "h", "5x", "1h30", "30m1h", "1m1m", "1..5s", ".s", "-5m"})
    EXPECT_THROW(parse_duration(bad), std::invalid_argument) << bad;
}

TEST(FuzzProgressTest, TallyLine) {
  FuzzTally t;
  t.cases = 1234;
  t.session_cases = 1000;
  t.session_s = 200;
  t.failed = 3;
  t.signatures = 2;
  t.new_signatures = 1;
  t.elapsed_s = 600;
  t.remaining_s = 28200;
  EXPECT_EQ(format_tally(t), "1234 graphs (5.0/s) | 3 failed, 0 invalid | 2 signatures, 1 new | 0:10:00 elapsed, 7:50:00 left");
  t.remaining_s = 0;  // --time ran out: the graphs in flight are still being checked
  EXPECT_EQ(format_tally(t), "1234 graphs (5.0/s) | 3 failed, 0 invalid | 2 signatures, 1 new | 0:10:00 elapsed, "
                             "time is up, finishing the graphs in flight");
  t.remaining_s = 28200;
  std::ostringstream plain;
  FuzzProgress p(plain, false, "fuzz: ");
  p.update(t);  // a plain line waits a minute
  EXPECT_EQ(plain.str(), "");
  std::ostringstream tty;
  FuzzProgress live(tty, true, "fuzz: ");
  live.update(t);
  live.finish();
  EXPECT_EQ(tty.str(), "\r\033[Kfuzz: " + format_tally(t) + "\r\033[K");
}

class FuzzCampaignTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gbcheck-campaign-test-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    { std::error_code ignored; remove_tree(fs::path(dir_).string(), ignored); }
  }
  void TearDown() override { { std::error_code ignored; remove_tree(fs::path(dir_).string(), ignored); } }

  // Small graphs against the kernel interpreter with a wrong constant in fused arithmetic: cheap
  // to check, and some graphs fail.
  FuzzOptions options(const std::string& sub) const {
    FuzzOptions o;
    o.generator = default_generator_config();
    o.out_dir = (dir_ / sub).string();
    o.seed = 40;
    o.check.backends = {"gbc-interp"};
    o.check.backend_options.inject_fault = "const";
    o.check.backend_options.cache_dir = (dir_ / "cache").string();
    o.check.limits.timeout_s = 120;
    o.generator.min_nodes = 4;
    o.generator.max_nodes = 8;
    o.generator.cases = 2;
    o.generator.allow_breaks = false;
    o.reduce_checks = 0;
    return o;
  }

  fs::path dir_;
};

// What a store says about cases and signatures, without run ids and times.
struct Findings {
  std::map<int64_t, std::string> cases;  // index -> "seed outcome keys"
  std::map<std::string, std::pair<int64_t, std::string>> signatures;  // key -> hits, status
};

Findings findings(const std::string& db) {
  FuzzStore store(db, false);
  Findings f;
  for (const CaseRow& c : store.cases()) {
    std::string row = std::to_string(c.graph_seed) + " " + c.outcome;
    for (const auto& k : c.keys) row += " | " + k;
    EXPECT_TRUE(f.cases.emplace(c.index, row).second) << "position " << c.index << " checked twice";
  }
  for (const SignatureInfo& s : store.signatures()) f.signatures[s.key] = {s.hit_count, s.status};
  return f;
}

TEST_F(FuzzCampaignTest, FourShardsMergedEqualOneRun) {
  FuzzOptions whole = options("whole");
  whole.cases = 12;
  FuzzResult one = run_fuzz(whole);
  EXPECT_EQ(one.run.status, "finished");
  EXPECT_EQ(one.counts.cases, 12);
  EXPECT_TRUE(one.error.empty()) << one.error;

  std::vector<std::string> shard_dbs;
  for (int i = 0; i < 4; ++i) {
    FuzzOptions s = options("shard" + std::to_string(i));
    s.cases = 12;
    s.shard = Shard{i, 4};
    s.jobs = i % 2 + 1;  // jobs split a shard further without changing what it checks
    FuzzResult r = run_fuzz(s);
    EXPECT_EQ(r.counts.cases, 3);
    shard_dbs.push_back((fs::path(s.out_dir) / FuzzStore::kFileName).string());
  }
  std::string merged = (dir_ / "merged.db").string();
  merge_stores(merged, shard_dbs);

  Findings a = findings((fs::path(whole.out_dir) / FuzzStore::kFileName).string());
  Findings b = findings(merged);
  EXPECT_EQ(a.cases.size(), 12u);
  EXPECT_EQ(a.cases, b.cases);
  EXPECT_EQ(a.signatures, b.signatures);
  EXPECT_FALSE(a.signatures.empty()) << "no graph failed: the test no longer covers deduplication";
  // Each new signature got its repro folder (original.yaml only: reduction is off here).
  FuzzStore store((fs::path(whole.out_dir) / FuzzStore::kFileName).string(), false);
  for (const SignatureInfo& s : store.signatures()) {
    EXPECT_EQ(s.reduce_state, "done") << s.key;
    EXPECT_TRUE(fs::exists(fs::path(whole.out_dir) / s.repro_path / "original.yaml")) << s.key;
  }
}

// Reduced signatures get the standalone folder of `gbcheck repro`: generated and reduced graphs
// have no model file, which once left only NOT-WRITTEN.txt there while the store said "done".
TEST_F(FuzzCampaignTest, ReducedSignaturesGetAStandaloneRepro) {
  FuzzOptions o = options("reduced");
  o.cases = 6;
  o.reduce_checks = 40;
  FuzzResult r = run_fuzz(o);
  ASSERT_TRUE(r.error.empty()) << r.error;
  FuzzStore store((fs::path(o.out_dir) / FuzzStore::kFileName).string(), false);
  int standalone = 0;
  for (const SignatureInfo& s : store.signatures()) {
    fs::path repro = fs::path(o.out_dir) / s.repro_path / "repro";
    EXPECT_FALSE(fs::exists(repro / "NOT-WRITTEN.txt")) << s.key;
    if (!fs::exists(repro / "manifest.json")) continue;
    ++standalone;
    for (const char* file : {"model.yaml", "repro.py", "repro.cpp", "README.md"})
      EXPECT_TRUE(fs::exists(repro / file)) << s.key << ": " << file;
  }
  EXPECT_GT(standalone, 0) << "no signature got a standalone repro";
}

TEST_F(FuzzCampaignTest, KilledRunResumesToTheSameCases) {
  FuzzOptions o = options("killed");
  o.cases = 8;
  std::string db = (fs::path(o.out_dir) / FuzzStore::kFileName).string();
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    run_fuzz(o);
    ::_exit(0);
  }
  int64_t before = 0;
  for (int tries = 0; tries < 6000 && before < 2; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!fs::exists(db)) continue;
    before = FuzzStore(db, false).counts().cases;
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ASSERT_GE(before, 2);
  // The orphaned worker finishes its case in flight and leaves (PR_SET_PDEATHSIG).
  std::this_thread::sleep_for(std::chrono::seconds(3));
  {
    FuzzStore store(db, false);
    ASSERT_TRUE(store.resumable_run());
  }

  FuzzOptions resume;
  resume.out_dir = o.out_dir;
  resume.resume = true;
  FuzzResult r = run_fuzz(resume);
  EXPECT_EQ(r.run.status, "finished");
  EXPECT_EQ(r.run.case_limit, 8);
  EXPECT_EQ(r.run.seed, 40u);
  Findings f = findings(db);
  ASSERT_EQ(f.cases.size(), 8u);
  for (int64_t k = 0; k < 8; ++k) EXPECT_TRUE(f.cases.count(k)) << k;
  FuzzStore store(db, false);
  EXPECT_EQ(store.runs().size(), 1u);
  EXPECT_FALSE(store.resumable_run());

  FuzzOptions again;
  again.out_dir = o.out_dir;
  again.resume = true;
  EXPECT_THROW(run_fuzz(again), std::invalid_argument);  // nothing left to resume
}

TEST_F(FuzzCampaignTest, RejectsBadOptions) {
  FuzzOptions o = options("bad");
  o.check.backends = {"gbcc"};
  EXPECT_THROW(run_fuzz(o), std::invalid_argument);
  o = options("bad");
  o.jobs = 0;
  EXPECT_THROW(run_fuzz(o), std::invalid_argument);
  o = options("bad");
  o.generator.max_nodes = 2;
  EXPECT_THROW(run_fuzz(o), std::invalid_argument);
}

}  // namespace
}  // namespace gbc
