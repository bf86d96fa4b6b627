#include "harness/bisect/check_intermediates.h"

#include <c10/core/Device.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "compiler/runtime/backend_device.h"
#include "harness/inputs/input_generator.h"
#include "oracles/error_stats.h"

namespace gbc {
namespace {

std::string index_text(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

// All the digits, where fmt_num's rounding shows two different values alike.
std::string exact(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::vector<BackendIntermediates> check_intermediates(const Model& model, const RunOptions& opt) {
  std::vector<BackendIntermediates> out;
  const c10::Device device = backend_device(opt.backend_options);
  InputGenerator gen(model, device);
  const int first = opt.only_case.value_or(0);
  const int end = opt.only_case ? first + 1 : opt.cases + static_cast<int>(opt.given_cases.size());
  for (const std::string& name : opt.backends) {
    BackendIntermediates r;
    r.backend = name;
    if (name == "eager") {
      r.note = "eager is what node values are compared with";
    } else {
      // Backends outside gbc's ladder show node values themselves, if at all (adapters).
      PreparedNodeSource shown;
      if (!ladder_shows_node_values(name)) {
        shown = prepare_node_source(model, name, opt.backend_options);
        if (!shown.source) {
          r.note = shows_only_outputs(name);
          out.push_back(std::move(r));
          continue;
        }
      }
      NodeValueSource* source = shown.source;
      for (int k = first; k < end && !r.first; ++k) {
        const TestCase tc = gen.run_case(k, opt.cases, opt.given_cases, opt.only_case ? opt.shrink_path : ShrinkPath{});
        NodeComparison c;
        try {
          c = source ? compare_shown_nodes(model, *source, tc, opt.backend_options.device) : compare_nodes(model, name, tc, opt.backend_options);
        } catch (const std::exception& e) {
          c.note = std::string("its node values could not be had: ") + e.what();
        }
        for (const std::string& d : c.declined)
          if (std::find(r.declined.begin(), r.declined.end(), d) == r.declined.end()) r.declined.push_back(d);
        if (c.nodes_compared == 0 && !c.first) {
          r.note = c.note;
          break;
        }
        r.compared = true;
        ++r.cases;
        r.nodes = std::max(r.nodes, c.nodes_compared);
        r.note = c.note;
        if (c.first) {
          r.first = c.first;
          r.first_case = k;
        }
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

void print_intermediates(const std::vector<BackendIntermediates>& results, std::ostream& out) {
  out << "intermediates (every node's value against eager's):\n";
  for (const BackendIntermediates& r : results) {
    out << "  " << r.backend << ": ";
    if (r.first) {
      const NodeDivergence& d = *r.first;
      out << "FAIL: first diverging node " << d.node << " (" << d.op << ")" << (d.loc.valid() ? " at " + d.loc.str() : "")
          << ", case " << r.first_case << (d.kernel.empty() ? "" : ", in kernel " + d.kernel) << ": " << d.mismatches << " of "
          << d.elements << " elements differ, first at " << index_text(d.index) << " (expected " << fmt_num(d.expected)
          << ", got " << fmt_num(d.actual) << (fmt_num(d.expected) == fmt_num(d.actual) ? ", " + exact(d.expected) + " vs " + exact(d.actual) : "")
          << ")\n";
    } else if (r.compared) {
      out << "PASS: " << r.nodes << " nodes on " << r.cases << (r.cases == 1 ? " case" : " cases") << " agree\n";
    } else {
      out << "not compared: " << r.note << "\n";
    }
    for (const std::string& d : r.declined) out << "    declined " << d << "\n";
  }
}

nlohmann::json intermediates_json(const std::vector<BackendIntermediates>& results) {
  nlohmann::json arr = nlohmann::json::array();
  for (const BackendIntermediates& r : results) {
    nlohmann::json j = {{"backend", r.backend}, {"compared", r.compared}, {"cases", r.cases}, {"nodes", r.nodes},
                        {"pass", r.pass()}, {"note", r.note}, {"declined", r.declined}};
    if (r.first) {
      const NodeDivergence& d = *r.first;
      j["first_divergence"] = {{"case", r.first_case}, {"node", d.node}, {"op", d.op}, {"loc", d.loc.valid() ? d.loc.str() : ""},
                               {"kernel", d.kernel}, {"elements", d.elements}, {"mismatches", d.mismatches},
                               {"index", d.index}, {"expected", d.expected}, {"actual", d.actual}};
    }
    arr.push_back(std::move(j));
  }
  return arr;
}

}  // namespace gbc
