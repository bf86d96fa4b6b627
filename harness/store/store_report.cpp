#include "harness/store/store_report.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <sstream>

#include "compiler/support/markup_escape.h"

namespace gbc {
namespace {

std::string xml_escape(const std::string& s) { return markup_escape(s, Markup::Xml); }

const RunInfo* find_run(const StoreReport& r, const std::string& uid) {
  for (const auto& run : r.runs)
    if (run.uid == uid) return &run;
  return nullptr;
}

// A run made with --inject-fault found planted bugs: its report must say so, and its replay lines
// must plant the same fault, or they pass.
std::set<std::string> faults_of(const StoreReport& r) {
  std::set<std::string> kinds;
  for (const auto& run : r.runs)
    if (std::string k = injected_fault(run); !k.empty()) kinds.insert(k);
  return kinds;
}

std::string fault_note(const std::set<std::string>& kinds) {
  std::string list;
  for (const auto& k : kinds) list += (list.empty() ? "" : ", ") + std::string("--inject-fault ") + k;
  return "*** FAULT INJECTION WAS ACTIVE (" + list +
         "): gbc miscompiled on purpose; these failures are expected, not real compiler bugs ***";
}

void print_signature(const StoreReport& r, const SignatureInfo& g, std::ostream& out) {
  out << "  " << g.key << "\n";
  if (!g.backend.empty()) out << "    backend: " << g.backend << "\n";
  out << "    " << g.summary << "\n";
  out << "    " << g.hit_count << (g.hit_count == 1 ? " hit" : " hits") << ", first seen " << g.first_seen << " (graph seed "
      << g.first_seed << ")";
  if (g.first_generation < g.last_generation && g.status == "new") out << ", a regression";
  out << "\n";
  out << "    replay: " << replay_hint(g, find_run(r, g.first_run)) << "\n";
  if (!g.repro_path.empty()) out << "    repro:  " << g.repro_path << "\n";
  else if (g.reduce_state == "failed") out << "    repro:  (reduction failed)\n";
}

}  // namespace

namespace {

// A string the fuzzer stored among a run's settings, or "" (runs stored before it had none).
std::string run_option(const RunInfo& run, const char* key) {
  nlohmann::json options = nlohmann::json::parse(run.options, nullptr, false);
  if (!options.is_object() || !options.contains(key) || !options[key].is_string()) return "";
  return options[key].get<std::string>();
}

// "gbc 3, ts-freeze 1": how many of `signatures` each backend has, in first-seen order.
std::string per_backend(const std::vector<SignatureInfo>& signatures) {
  std::vector<std::pair<std::string, int>> counts;
  for (const auto& g : signatures) {
    const std::string b = g.backend.empty() ? "(all)" : g.backend;
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == b; });
    if (it == counts.end()) counts.emplace_back(b, 1);
    else ++it->second;
  }
  std::string s;
  for (const auto& [b, n] : counts) s += (s.empty() ? "" : ", ") + b + " " + std::to_string(n);
  return s;
}

}  // namespace

std::string injected_fault(const RunInfo& run) { return run_option(run, "inject_fault"); }

std::string replay_hint(const SignatureInfo& sig, const RunInfo* run) {
  std::string gen_args = run && !run->gen_args.empty() ? " " + run->gen_args : "";
  std::string backend = sig.backend.empty() && run ? run->backends : sig.backend;
  std::string fault = run ? injected_fault(*run) : "";
  std::string adapters = run ? run_option(*run, "backends_config") : "";
  return "gbcheck-gen --seed " + std::to_string(sig.first_seed) + " --count 1" + gen_args + " --out DIR && gbcheck DIR/gen_" +
         std::to_string(sig.first_seed) + ".yaml" + (backend.empty() ? "" : " --backend " + backend) +
         (fault.empty() ? "" : " --inject-fault " + fault) + (adapters.empty() ? "" : " --backends-config " + adapters);
}

StoreReport build_store_report(FuzzStore& store) {
  StoreReport r;
  r.store_path = store.db().path();
  r.runs = store.runs();
  r.latest_generation = store.latest_generation();
  r.totals = store.counts();
  for (auto& g : store.signatures()) {
    if (g.status == "new") r.fresh.push_back(g);
    else if (g.status == "fixed") r.fixed.push_back(g);
    else if (g.last_generation == r.latest_generation) r.known.push_back(g);
  }
  return r;
}

void print_store_report(const StoreReport& r, std::ostream& out) {
  const std::set<std::string> faults = faults_of(r);
  if (!faults.empty()) out << fault_note(faults) << "\n";
  out << "gbcheck fuzz store " << r.store_path << ": " << r.runs.size() << (r.runs.size() == 1 ? " run" : " runs")
      << " (latest generation " << r.latest_generation << "), " << r.totals.cases << " graphs checked, "
      << r.totals.failed << " failed, " << r.totals.invalid << " invalid\n";
  out << "new since the previous run: " << r.fresh.size() << (r.fresh.size() == 1 ? " signature" : " signatures")
      << (r.fresh.empty() ? "" : " (by backend: " + per_backend(r.fresh) + ")") << "\n";
  for (const auto& g : r.fresh) print_signature(r, g, out);
  out << "known, seen again: " << r.known.size() << (r.known.empty() ? "" : " (by backend: " + per_backend(r.known) + ")") << "\n";
  for (const auto& g : r.known) out << "  " << g.key << "  (" << g.hit_count << " hits)\n";
  out << "marked fixed: " << r.fixed.size() << "\n";
  for (const auto& g : r.fixed) out << "  " << g.key << "  (last seen " << g.last_seen << ")\n";
  if (!faults.empty()) out << fault_note(faults) << "\n";
}

std::string store_report_junit(const StoreReport& r) {
  const std::set<std::string> faults = faults_of(r);
  const std::string note = faults.empty() ? "" : fault_note(faults) + "\n";
  std::ostringstream cases;
  int tests = 0, failures = 0, skipped = 0;
  auto testcase = [&](const SignatureInfo& g, bool fail) {
    ++tests;
    cases << "    <testcase classname=\"gbcheck.fuzz." << xml_escape(g.backend.empty() ? "all" : g.backend)
          << "\" name=\"" << xml_escape(g.key) << "\">\n";
    std::ostringstream body;
    body << note << g.summary << "\nhits: " << g.hit_count << "\nfirst seen: " << g.first_seen << " (graph seed " << g.first_seed
         << ")\nreplay: " << replay_hint(g, find_run(r, g.first_run)) << "\n";
    if (!g.repro_path.empty()) body << "repro: " << g.repro_path << "\n";
    if (fail) {
      ++failures;
      cases << "      <failure type=\"" << xml_escape(g.kind) << "\" message=\"" << xml_escape((faults.empty() ? "" : "(fault injected) ") + g.summary) << "\">"
            << xml_escape(body.str()) << "</failure>\n";
    } else {
      ++skipped;
      cases << "      <skipped message=\"known bug, seen again\"/>\n      <system-out>" << xml_escape(body.str())
            << "</system-out>\n";
    }
    cases << "    </testcase>\n";
  };
  for (const auto& g : r.fresh) testcase(g, true);
  for (const auto& g : r.known) testcase(g, false);
  // One passing case that carries the totals, so a clean night still shows a test.
  ++tests;
  cases << "    <testcase classname=\"gbcheck.fuzz\" name=\"campaign\">\n      <system-out>" << r.totals.cases
        << " graphs checked, " << r.totals.failed << " failed, " << r.totals.invalid << " invalid, " << r.runs.size()
        << " runs</system-out>\n    </testcase>\n";
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"gbcheck fuzz\" tests=\"" << tests << "\" failures=\"" << failures << "\" skipped=\""
      << skipped << "\">\n";
  out << "  <testsuite name=\"gbcheck.fuzz\" tests=\"" << tests << "\" failures=\"" << failures << "\" errors=\"0\" skipped=\""
      << skipped << "\">\n";
  if (!faults.empty())
    out << "    <properties>\n      <property name=\"fault_injection\" value=\"" << xml_escape(fault_note(faults))
        << "\"/>\n    </properties>\n";
  out << cases.str();
  out << "  </testsuite>\n</testsuites>\n";
  return out.str();
}

}  // namespace gbc
