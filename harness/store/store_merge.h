// `gbcheck db merge OUT.db IN.db...`: folds the stores of shards (or of successive nights) into
// one. Runs are matched by uid and cases by (run, index), so an input merged twice, or shards that
// all started from a copy of the same store, add nothing twice. Signatures are matched by key:
// first/last seen and generations take the extremes, the example case and repro come from the
// input that saw it first, the status is new over fixed over known (a regression one shard found
// wins), and hit counts are recounted from the merged hits. Repro paths are rewritten to stay
// valid relative to OUT's folder. Tested in tests/fuzz/fuzz_store_test.cpp and
// tests/fuzz/fuzz_campaign_test.cpp (four shards merged equal one run).
#pragma once

#include <string>
#include <vector>

namespace gbc {

struct MergeSummary {
  int runs_added = 0;
  int cases_added = 0;
  int signatures_added = 0;
};

/// Merges `inputs` into the store at `out` (created when missing). Throws StoreError.
MergeSummary merge_stores(const std::string& out, const std::vector<std::string>& inputs);

}  // namespace gbc
