// `gbcheck db merge OUT.db IN.db...`, `gbcheck db report DIR|DB [--junit FILE] [--html FILE]` and
// `gbcheck db mark DIR|DB KEY... --status fixed|known`: the fuzz store's maintenance
// (harness/store). report exits 1 when the store holds new signatures, so a CI step fails on new
// bugs (and its JUnit file names them); the others exit 0, or 2 for an unusable store.
// Docs: docs/fuzzing.md.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "harness/cli/cli.h"
#include "harness/cli/option_checks.h"
#include "harness/report/store_site.h"
#include "harness/runner/check_report.h"
#include "harness/store/fuzz_store.h"
#include "harness/store/store_merge.h"
#include "harness/store/store_report.h"

namespace gbc {
namespace {

// A campaign folder means its fuzz.db.
std::string store_path(const std::string& path) {
  return std::filesystem::is_directory(path) ? (std::filesystem::path(path) / FuzzStore::kFileName).string() : path;
}

}  // namespace

std::function<int()> add_db_command(CLI::App& sub) {
  struct Args {
    std::string out, junit, html, status = "fixed";
    std::vector<std::string> inputs, keys;
    std::string action;
  };
  auto a = std::make_shared<Args>();
  sub.require_subcommand(1);
  CLI::App* merge = sub.add_subcommand("merge", "merge shard stores into OUT (created if missing)");
  merge->add_option("out", a->out, "the merged store (a .db file or a campaign folder)")->required();
  merge->add_option("inputs", a->inputs, "stores to merge in (.db files or campaign folders)")->required();
  merge->callback([a] { a->action = "merge"; });
  CLI::App* report = sub.add_subcommand("report", "what the store holds, new signatures since the previous run first");
  report->add_option("store", a->out, "a campaign folder or its fuzz.db")->required();
  report->add_option("--junit", a->junit, "also write JUnit XML: new signatures as failed tests")->check(writable_file());
  report->add_option("--html", a->html, "also write the HTML report (docs/report.md): signatures with pictures and repro links")
      ->check(writable_file());
  report->callback([a] { a->action = "report"; });
  CLI::App* mark = sub.add_subcommand("mark", "set the status of signatures by hand (fixed once the bug is fixed)");
  mark->add_option("store", a->out, "a campaign folder or its fuzz.db")->required();
  mark->add_option("keys", a->keys, "signature keys, as the report prints them")->required();
  mark->add_option("--status", a->status, "fixed or known")->check(CLI::IsMember({"fixed", "known"}))->capture_default_str();
  mark->callback([a] { a->action = "mark"; });

  return [a]() -> int {
    try {
      if (a->action == "merge") {
        std::vector<std::string> inputs;
        for (const auto& i : a->inputs) inputs.push_back(store_path(i));
        MergeSummary m = merge_stores(store_path(a->out), inputs);
        std::cout << "merged " << inputs.size() << (inputs.size() == 1 ? " store" : " stores") << " into "
                  << store_path(a->out) << ": " << m.runs_added << " runs, " << m.cases_added << " cases, "
                  << m.signatures_added << " signatures added\n";
        return kExitPass;
      }
      FuzzStore store(store_path(a->out), false);
      if (a->action == "mark") {
        int missing = 0;
        for (const auto& k : a->keys) {
          if (store.set_status(k, a->status)) continue;
          std::cerr << "gbcheck db mark: no signature '" << k << "' in " << store_path(a->out) << "\n";
          ++missing;
        }
        return missing ? kExitInvalid : kExitPass;
      }
      StoreReport r = build_store_report(store);
      print_store_report(r, std::cout);
      if (!a->junit.empty()) {
        std::ofstream out(a->junit);
        out << store_report_junit(r);
        if (!out) {
          std::cerr << "gbcheck db report: cannot write " << a->junit << "\n";
          return kExitInvalid;
        }
      }
      if (!a->html.empty()) {
        try {
          write_site(store_site(r, store.folder(), a->html), site_folder(a->html));
        } catch (const std::exception& e) {
          std::cerr << "gbcheck db report: " << e.what() << "\n";
          return kExitInvalid;
        }
        std::cout << "report: " << a->html << "\n";
      }
      return r.clean() ? kExitPass : kExitDivergence;
    } catch (const StoreError& e) {
      std::cerr << "gbcheck db: " << e.what() << "\n";
      return kExitInvalid;
    }
  };
}

}  // namespace gbc
