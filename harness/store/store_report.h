// `gbcheck db report DIR|DB [--junit FILE]`: what the fuzzer found, new since the previous run
// first. New signatures (first seen in the latest generation, or regressions of fixed ones) are
// listed with their example case, replay command and repro folder; known ones seen again and
// fixed ones follow as counts and one-liners. The JUnit XML has one test case per signature the
// latest generation hit: new ones fail, known ones are skipped, so a CI job shows new bugs as
// failed tests and stays green on old ones. Runs made with --inject-fault put a banner on both and
// the fault on every replay line. Tested in tests/fuzz/fuzz_store_test.cpp.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "harness/store/fuzz_store.h"

namespace gbc {

struct StoreReport {
  std::string store_path;
  std::vector<RunInfo> runs;
  int64_t latest_generation = 0;
  FuzzStore::Counts totals;
  std::vector<SignatureInfo> fresh;  // status new
  std::vector<SignatureInfo> known;  // known, hit by the latest generation
  std::vector<SignatureInfo> fixed;

  /// Exit status for scripts: true when nothing new was found.
  bool clean() const { return fresh.empty(); }
};

StoreReport build_store_report(FuzzStore& store);
void print_store_report(const StoreReport& report, std::ostream& out);
/// The JUnit XML document (testsuites > testsuite > testcase).
std::string store_report_junit(const StoreReport& report);
/// The --inject-fault kind a run was made with ("" when none): its findings are planted bugs.
std::string injected_fault(const RunInfo& run);
/// The command that rechecks a signature's example graph with `gbcheck-gen` and `gbcheck`.
std::string replay_hint(const SignatureInfo& sig, const RunInfo* run);

}  // namespace gbc
