#include "harness/bisect/bisect_report.h"

#include <sstream>

#include "oracles/error_stats.h"

namespace gbc {
namespace {

std::string number(double v) {
  std::ostringstream s;
  s.precision(9);
  s << v;
  return s.str();
}

}  // namespace

void print_bisect_result(const BisectResult& r, std::ostream& out) {
  if (!r.fault.empty())
    out << "*** FAULT INJECTION ACTIVE (--inject-fault " << r.fault << "): gbc miscompiles on purpose ***\n";
  out << "bisect " << r.model_path << " (target " << r.target << ", seed " << r.seed << ")\n";
  out << "ladder:\n";
  for (const auto& s : r.ladder)
    out << "  " << s.stage << (s.result.diverged ? "  DIVERGES  " : "  ok  ") << s.result.summary << "\n";
  if (!r.diverged()) {
    out << "result: no stage diverges from eager on these cases\n";
    return;
  }
  out << "stage: " << r.stage << "\n  show: " << r.stage_command << "\n";
  if (r.passes) {
    if (!r.passes->pass.empty()) {
      out << "pass:  " << r.passes->pass << " (disabling it removes the divergence; " << r.passes->probes.size()
          << " checks)\n  show: " << r.pass_command << "\n";
    } else {
      out << "pass:  none: " << r.passes->note << "\n";
    }
  }
  if (r.nodes) {
    if (r.nodes->first) {
      const NodeDivergence& d = *r.nodes->first;
      out << "node:  " << d.node << " = " << d.op << "(...) at " << d.loc.str();
      if (!d.kernel.empty()) out << " in kernel " << d.kernel;
      out << "\n  " << d.mismatches << " of " << d.elements << " elements differ; first at " << index_str(d.index)
          << ": eager " << number(d.expected) << ", " << r.stage << " " << number(d.actual) << "\n";
      out << "  show: " << r.node_command << "\n";
    } else {
      out << "node:  none: " << r.nodes->note << "\n";
    }
    for (const std::string& d : r.nodes->declined) out << "  declined " << d << "\n";
  }
}

nlohmann::json bisect_result_to_json(const BisectResult& r) {
  nlohmann::json j;
  j["schema"] = "gbcheck.bisect/v1";
  j["model"] = r.model_path;
  j["target"] = r.target;
  j["seed"] = r.seed;
  j["injected_fault"] = r.fault.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.fault);
  j["disabled_passes"] = r.disabled_passes;
  j["ladder"] = nlohmann::json::array();
  for (const auto& s : r.ladder)
    j["ladder"].push_back({{"stage", s.stage},
                           {"diverged", s.result.diverged},
                           {"crashed", s.result.crashed},
                           {"case", s.result.failing_case},
                           {"summary", s.result.summary}});
  j["stage"] = r.diverged() ? nlohmann::json(r.stage) : nlohmann::json(nullptr);
  j["case"] = r.failing_case;
  j["stage_command"] = r.stage_command;
  if (r.passes) {
    nlohmann::json p;
    p["candidates"] = r.passes->candidates;
    p["pass"] = r.passes->pass.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.passes->pass);
    p["together"] = r.passes->together;
    p["note"] = r.passes->note;
    p["command"] = r.pass_command;
    p["probes"] = nlohmann::json::array();
    for (const auto& probe : r.passes->probes) p["probes"].push_back({{"disabled", probe.disabled}, {"diverged", probe.diverged}});
    j["pass"] = p;
  }
  if (r.nodes) {
    nlohmann::json n;
    n["kernels"] = r.nodes->kernels;
    n["compared"] = r.nodes->nodes_compared;
    n["skipped"] = r.nodes->skipped;
    n["declined"] = r.nodes->declined;
    n["note"] = r.nodes->note;
    if (r.nodes->first) {
      const NodeDivergence& d = *r.nodes->first;
      n["node"] = d.node;
      n["op"] = d.op;
      n["loc"] = d.loc.str();
      n["kernel"] = d.kernel;
      n["elements"] = d.elements;
      n["mismatches"] = d.mismatches;
      n["index"] = d.index;
      n["expected"] = d.expected;
      n["actual"] = d.actual;
      n["command"] = r.node_command;
    } else {
      n["node"] = nullptr;
    }
    j["node"] = n;
  }
  return j;
}

}  // namespace gbc
