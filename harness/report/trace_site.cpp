#include "harness/report/trace_site.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "compiler/support/config_dir.h"
#include "harness/report/drift_plot.h"
#include "harness/report/graph_svg.h"
#include "harness/report/html_page.h"

namespace gbc {
namespace {

using nlohmann::json;
using html::escape;

// Field readers that tolerate absent and null fields: a trace from a killed run is still readable.
std::string str(const json& j, const std::string& key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}
double num(const json& j, const std::string& key) {
  if (!j.is_object() || !j.contains(key)) return 0.0;
  const json& v = j[key];
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return v == "nan" ? NAN : v == "inf" ? INFINITY : v == "-inf" ? -INFINITY : 0.0;
  return 0.0;
}
const json& arr(const json& j, const std::string& key) {
  static const json empty = json::array();
  return j.is_object() && j.contains(key) && j[key].is_array() ? j[key] : empty;
}
std::string g3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string loc_text(const json& loc) {
  if (!loc.is_object()) return "";
  std::string s = str(loc, "file") + ":" + str(loc, "line") + ":" + str(loc, "col");
  if (!str(loc, "python").empty()) s += " (python: " + str(loc, "python") + ")";
  return s;
}

// Page-name-safe: letters, digits, '-' and '_'.
std::string slug(const std::string& s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  return out;
}

// GitHub's heading anchors: lower case, punctuation dropped, spaces to '-'.
std::string heading_anchor(const std::string& heading) {
  std::string out;
  for (char c : heading) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (c == ' ') out += '-';
  }
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Context {
  const Trace& trace;
  SiteNames names;
  std::string docs_markdown;  // docs/graph-breaks.md, "" when absent
  std::string cwd;            // the traced run's working folder: model paths are relative to it
  std::vector<std::pair<std::string, std::string>> nav;
};

std::string break_doc_link(const Context& c, const std::string& code) {
  const std::string anchor = graph_break_anchor(c.docs_markdown, code);
  if (anchor.empty()) return escape(code);
  return "<a class=\"code\" href=\"" + escape(c.names.file("graph-breaks") + "#" + anchor) + "\">" + escape(code) + "</a>";
}

// The model's lines around a location, the located one marked: what a break's code looks like.
std::string source_excerpt(const Context& c, const json& loc) {
  if (!loc.is_object() || str(loc, "file").empty()) return "";
  std::filesystem::path file(str(loc, "file"));
  if (file.is_relative() && !c.cwd.empty()) file = std::filesystem::path(c.cwd) / file;
  std::ifstream in(file);
  if (!in) return "";
  const int line = static_cast<int>(num(loc, "line"));
  std::string out, text;
  for (int n = 1; std::getline(in, text); ++n) {
    if (n < line - 2) continue;
    if (n > line + 2) break;
    out += (n == line ? ">" : " ") + std::to_string(n) + " | " + text + "\n";
  }
  return out.empty() ? "" : "<pre class=\"excerpt\"><code>" + escape(out) + "</code></pre>";
}

// Everything one backend's program says, with the kernel events of the run.
struct ProgramView {
  std::string backend;
  const json* program = nullptr;
};

std::vector<ProgramView> programs(const Trace& t) {
  std::vector<ProgramView> out;
  std::set<std::string> seen;
  for (const json* e : t.all("program"))
    if (seen.insert(str(*e, "backend")).second) out.push_back({str(*e, "backend"), &(*e)["program"]});
  return out;
}

std::string graph_page_name(const std::string& backend, const std::string& index) {
  return "graph-" + slug(backend) + "-" + slug(index);
}

// Which model node ran how under one backend's program (graph_svg.h's classes).
NodeClasses node_classes(const json& program, const json& model_graph) {
  NodeClasses classes;
  int kernel = 0;
  for (const json& seg : program) {
    if (str(seg, "kind") == "graph_break") {
      const json& loc = seg["event"]["loc"];
      for (const json& n : arr(model_graph, "nodes"))
        if (n.contains("loc") && n["loc"].is_object() && loc.is_object() && str(n["loc"], "line") == str(loc, "line") &&
            str(n["loc"], "file") == str(loc, "file"))
          classes[str(n, "id")] = "break";
      continue;
    }
    for (const json& step : arr(seg, "steps")) {
      const std::string kind = str(step, "kind");
      const std::string cls = kind == "kernel" ? "kernel-" + std::to_string(kernel++) : kind == "extern" ? "extern" : "aten";
      for (const json& n : arr(step, "model_nodes")) classes[n.get<std::string>()] = cls;
    }
  }
  for (const json& in : arr(model_graph, "inputs")) classes[str(in, "id")] = str(in, "role") == "param" ? "param" : "input";
  return classes;
}

// The kernel events (generated source, compile time, cache hit) that define a kernel of graph N:
// kernel names repeat across graphs, modules are named "graphN_mK" (kernel_region.cpp).
std::vector<const json*> kernel_events_for(const Trace& t, const std::string& graph_index, const std::string& kernel) {
  std::vector<const json*> out;
  const std::string module_prefix = "graph" + graph_index + "_m";
  for (const json* e : t.all("kernel")) {
    if (str(*e, "module").rfind(module_prefix, 0) != 0) continue;
    for (const json& k : arr(*e, "kernels"))
      if (k == kernel) {
        out.push_back(e);
        break;
      }
  }
  return out;
}

std::string graph_page(const Context& c, const std::string& backend, const json& seg) {
  std::string body = "<p>backend <b>" + escape(backend) + "</b>; reads " + escape(arr(seg, "inputs").dump()) + ", returns " +
                     escape(arr(seg, "outputs").dump()) + "</p>\n<h2>Ops</h2>\n";
  std::vector<std::vector<std::string>> rows;
  for (const json& n : arr(seg, "nodes"))
    rows.push_back({escape(str(n, "id")), "<code>" + escape(str(n, "op")) + "</code>", "<span class=\"loc\">" + escape(loc_text(n["loc"])) + "</span>"});
  body += html::table({"node", "op", "source line"}, rows, "ops");
  body += "<h2>Steps: fused kernels, extern calls, ATen</h2>\n";
  rows.clear();
  for (const json& s : arr(seg, "steps")) {
    std::string computes;
    for (const json& n : arr(s, "model_nodes")) computes += (computes.empty() ? "" : ", ") + n.get<std::string>();
    std::string lines;
    for (const json& l : arr(s, "locs")) {
      const std::string t = loc_text(l);
      if (lines.find(t) == std::string::npos) lines += (lines.empty() ? "" : " ") + t;
    }
    rows.push_back({escape(str(s, "kind")), "<code>" + escape(str(s, "name")) + "</code>", escape(computes), escape(str(s, "note")),
                    escape(lines)});
  }
  body += html::table({"kind", "name", "computes", "note", "source lines"}, rows, "steps");
  body += "<h2>Generated kernels</h2>\n";
  int shown = 0;
  for (const json& s : arr(seg, "steps")) {
    if (str(s, "kind") != "kernel") continue;
    std::string nodes;
    for (const json& n : arr(s, "nodes")) nodes += n.get<std::string>() + "\n";
    body += "<div class=\"kernel\" id=\"kernel-" + escape(slug(str(s, "name"))) + "\"><h3><code>" + escape(str(s, "name")) + "</code></h3>";
    body += html::code_block("nodes it computes", nodes, "ir");
    for (const json* k : kernel_events_for(c.trace, str(seg, "index"), str(s, "name"))) {
      body += "<p class=\"muted\">module " + escape(str(*k, "module")) + " (" + escape(str(*k, "device")) + "): " +
              ((*k).value("cache_hit", false) ? "from the kernel cache" : "compiled") + " in " + escape(html::ms_text(num(*k, "compile_ms"))) +
              ((*k).value("ok", true) ? "" : "; failed: " + escape(str(*k, "error"))) + "</p>";
      body += html::code_block("generated source of module " + str(*k, "module"), str(*k, "source"), "cpp");
    }
    body += "</div>\n";
    ++shown;
  }
  if (!shown) body += "<p class=\"muted\">no fused kernel in this graph</p>\n";
  body += "<h2>Guards</h2>\n";
  int entry = 0;
  for (const json& e : arr(seg, "entries")) {
    body += html::code_block("entry " + std::to_string(entry) + " (" + str(e, "calls") + " calls)", str(e, "guards"), "guards", entry == 0);
    ++entry;
  }
  if (seg.value("eager_calls", 0) > 0) body += "<p>" + str(seg, "eager_calls") + " calls ran eagerly after the cache limit</p>";
  return html::page("graph " + str(seg, "index") + " (" + backend + ")", c.nav, body);
}

// Compile events of the run, once each: from the events as they happened and from the reports.
std::vector<json> compile_events(const Trace& t) {
  std::vector<json> out;
  std::set<std::string> seen;
  auto add = [&](const json& e) {
    const std::string key = str(e, "kind") + str(e, "code") + loc_text(e["loc"]) + str(e, "message");
    if (seen.insert(key).second) out.push_back(e);
  };
  for (const json* e : t.all("compile_event")) add(*e);
  for (const json* r : t.all("check_report"))
    for (const json& b : arr((*r)["report"], "backends"))
      for (const json& e : arr(b, "events")) add(e);
  return out;
}

std::string breaks_page(const Context& c) {
  std::string body;
  for (const std::string kind : {"graph break", "fallback", "recompile"}) {  // CompileEvent::kind_name
    body += "<h2>" + escape(kind == "graph break" ? "Graph breaks" : kind == "fallback" ? "Fallbacks" : "Recompiles") + "</h2>\n";
    int n = 0;
    for (const json& e : compile_events(c.trace)) {
      if (str(e, "kind") != kind) continue;
      ++n;
      body += "<div class=\"event " + escape(slug(kind)) + "\"><p><b>" + break_doc_link(c, str(e, "code")) + "</b> at <span class=\"loc\">" +
              escape(loc_text(e["loc"])) + "</span>" + (str(e, "op").empty() ? "" : " (op <code>" + escape(str(e, "op")) + "</code>)") +
              ": " + escape(str(e, "message")) + "</p>";
      if (!str(e, "hint").empty()) body += "<p>hint: " + escape(str(e, "hint")) + "</p>";
      body += source_excerpt(c, e["loc"]) + "</div>\n";
    }
    if (!n) body += "<p class=\"muted\">none</p>\n";
  }
  return html::page("Graph breaks, fallbacks and recompiles", c.nav, body);
}

std::string stats_table(const json& stats) {
  std::vector<std::vector<std::string>> rows;
  for (const char* k : {"numel", "mismatched", "max_abs", "mean_abs", "max_rel", "mean_rel", "max_ulp", "worst_expected", "worst_actual",
                        "required_rtol", "required_atol", "tol_ratio"})
    if (stats.contains(k)) rows.push_back({escape(k), escape(str(stats, k))});
  if (stats.contains("worst_index")) rows.push_back({"worst_index", escape(str(stats, "worst_index"))});
  return html::table({"statistic", "value"}, rows, "stats");
}

std::vector<DriftSeries> drift_series(const json& backend) {
  std::vector<DriftSeries> out;
  for (const json& d : arr(backend, "drift")) {
    DriftSeries s;
    s.case_index = d.value("case", 0);
    s.pass = d.value("pass", true);
    for (const json& st : arr(d, "steps")) s.steps.push_back({num(st, "max_abs"), num(st, "max_rel"), num(st, "ratio")});
    out.push_back(std::move(s));
  }
  return out;
}

std::string failure_anchor(const std::string& backend, const json& f) { return "fail-" + slug(backend) + "-" + str(f, "case"); }

std::string failures_page(const Context& c) {
  std::string body;
  int failures = 0;
  for (const json* r : c.trace.all("check_report")) {
    const json& rep = (*r)["report"];
    const std::string model_path = str(rep["model"], "path");
    for (const json& b : arr(rep, "backends")) {
      const std::string backend = str(b, "name");
      if (!arr(b, "drift").empty()) {
        body += "<h2>Drift over the steps: " + escape(backend) + "</h2>\n" + drift_plot_svg(str(rep["model"], "name") + " " + backend, drift_series(b));
      }
      for (const json& x : arr(b, "expectation_failures")) body += "<p class=\"fail\">expectation failed (" + escape(backend) + "): " + escape(x.get<std::string>()) + "</p>\n";
      for (const json& f : arr(b, "failures")) {
        ++failures;
        body += "<div class=\"failure\" id=\"" + escape(failure_anchor(backend, f)) + "\"><h2>" + escape(backend) + ": case " + escape(str(f, "case")) +
                " (seed " + escape(str(f, "seed")) + ")</h2>\n";
        body += "<p>inputs: " + escape(arr(f, "inputs").dump()) + "</p>";
        if (f.contains("error")) body += "<p class=\"fail\">" + escape(str(f["error"], "kind")) + ": " + escape(str(f["error"], "message")) + " at " + escape(loc_text(f["error"]["loc"])) + "</p>";
        for (const json& o : arr(f, "outputs")) {
          const json& s = o["stats"];
          body += "<h3>" + escape(str(o, "kind")) + " <code>" + escape(str(o, "output")) + "</code>: " + escape(str(o, "oracle")) + "</h3>";
          body += "<p class=\"worst\">worst element " + escape(str(s, "worst_index")) + ": expected " + escape(str(s, "worst_expected")) +
                  ", got " + escape(str(s, "worst_actual")) + " (tolerance rtol " + escape(g3(num(o, "rtol"))) + " atol " + escape(g3(num(o, "atol"))) + ")</p>";
          body += "<p>" + escape(str(o, "detail")) + "</p>";
          if (!str(o, "min_passing").empty()) body += "<p class=\"min-passing\">would pass with: <code>" + escape(str(o, "min_passing")) + "</code></p>";
          body += stats_table(s);
        }
        body += "<p>replay: <code class=\"replay\">" + escape(str(f, "replay")) + "</code></p>";
        if (f.contains("shrunk") && f["shrunk"].is_object())
          body += "<p>shrunk (" + escape(str(f["shrunk"], "steps")) + " steps): <code class=\"replay\">" + escape(str(f["shrunk"], "replay")) + "</code></p>";
        if (!str(f, "shrink_note").empty()) body += "<p class=\"muted\">" + escape(str(f, "shrink_note")) + "</p>";
        body += "<p>reduce: <code class=\"reduce\">" + escape("gbcheck reduce " + model_path + " --backend " + backend + " --seed " + str(rep, "seed") + " --case " + str(f, "case") +
                                                       (str(rep, "injected_fault").empty() ? "" : " --inject-fault " + str(rep, "injected_fault"))) + "</code></p></div>\n";
      }
    }
    if (rep.contains("eager_error")) body += "<p class=\"fail\">the reference failed: " + escape(str(rep["eager_error"], "message")) + "</p>";
  }
  if (!failures) body += "<p class=\"muted\">no failing case</p>\n";
  return html::page("Failures", c.nav, body);
}

// A fuzz trace holds every graph's passes: past this many, the page lists the rest as counts.
constexpr size_t kMaxPassesWithIr = 300;

std::string passes_page(const Context& c) {
  std::string body;
  const auto passes = c.trace.all("pass");
  if (passes.size() > kMaxPassesWithIr)
    body += "<p class=\"muted\">" + std::to_string(passes.size()) + " pass runs; the first " + std::to_string(kMaxPassesWithIr) +
            " are shown (the trace holds them all)</p>\n";
  for (size_t i = 0; i < passes.size() && i < kMaxPassesWithIr; ++i) {
    const json* p = passes[i];
    const std::string title = str(*p, "graph") + ": " + str(*p, "name") + (p->value("disabled", false) ? " (disabled)" : "") + "  " +
                              html::ms_text(num(*p, "ms")) + ", nodes " + str(*p, "nodes_before") + " -> " + str(*p, "nodes_after");
    if (!p->value("changed", false)) {
      body += "<p class=\"muted\">" + escape(title) + " (no change)</p>\n";
      continue;
    }
    body += "<h3>" + escape(title) + "</h3>" + html::code_block("before", str(*p, "before"), "ir") + html::code_block("after", str(*p, "after"), "ir");
  }
  const auto partitions = c.trace.all("partition");
  for (size_t i = 0; i < partitions.size() && i < kMaxPassesWithIr; ++i) {
    const json* p = partitions[i];
    body += html::code_block("partition of " + str(*p, "graph"), str(*p, "partition"), "ir");
  }
  return html::page("Passes and partitions", c.nav, body);
}

// docs/graph-breaks.md as a page: each code's section under its GitHub anchor.
std::string docs_page(const Context& c) {
  std::string body = "<p class=\"muted\">docs/graph-breaks.md, as the report was made</p>\n";
  std::istringstream in(c.docs_markdown);
  std::string line, section;
  auto flush = [&] {
    if (!section.empty()) body += "<pre>" + escape(section) + "</pre>\n</section>\n";
    section.clear();
  };
  bool open = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) {
      if (open) flush();
      body += "<section id=\"" + escape(heading_anchor(line.substr(3))) + "\"><h2>" + escape(line.substr(3)) + "</h2>\n";
      open = true;
      continue;
    }
    if (open) section += line + "\n";
  }
  if (open) flush();
  return html::page("Graph breaks, fallbacks and recompiles: the codes", c.nav, body);
}

std::string index_page(const Context& c, const std::vector<ProgramView>& progs) {
  const Trace& t = c.trace;
  std::string body;
  const json& start = *t.all("trace_start").front();
  body += "<p>command: <code>" + escape(str(start, "command")) + "</code></p>\n";
  if (!t.finished) body += "<p class=\"fail\">the run did not finish: this is the trace it left (a kill or a crash)</p>\n";
  else body += "<p>exit code " + escape(std::to_string(t.exit_code)) + "</p>\n";
  if (t.unreadable_lines) body += "<p class=\"muted\">" + std::to_string(t.unreadable_lines) + " unreadable line(s) skipped</p>\n";

  const auto models = t.all("model_loaded");
  for (const json* m : models)
    body += "<h2>Model " + escape(str(*m, "name")) + "</h2><p>" + escape(str(*m, "path")) + ": " + std::to_string(arr((*m)["graph"], "nodes").size()) + " nodes</p>\n";

  // Verdicts per backend, from the check and explain reports.
  std::vector<std::vector<std::string>> rows;
  for (const json* r : t.all("check_report"))
    for (const json& b : arr((*r)["report"], "backends"))
      rows.push_back({escape(str(b, "name")), html::badge(b.value("pass", false) ? "PASS" : "FAIL"),
                      escape(str(b, "cases_run") + " run, " + str(b, "cases_failed") + " failed"), escape(str(b, "graphs")),
                      escape(str(b, "graph_breaks")), escape(str(b, "fallbacks")), escape(str(b, "recompiles")), escape(html::ms_text(num(b, "compile_ms")))});
  for (const json* r : t.all("explain_report"))
    for (const json& b : arr((*r)["report"], "backends"))
      rows.push_back({escape(str(b, "name")), html::badge(b.value("exit_code", 0) == 0 ? "EXPLAINED" : "FAIL"), escape(str(b, "cases_run") + " run"),
                      escape(str(b, "graphs")), escape(str(b, "graph_breaks")), escape(str(b, "fallbacks")), escape(str(b, "recompiles")),
                      escape(html::ms_text(num(b, "compile_ms")))});
  if (!rows.empty())
    body += "<h2>Backends</h2>\n" + html::table({"backend", "verdict", "cases", "graphs", "graph breaks", "fallbacks", "recompiles", "compile"}, rows, "verdicts");

  // The picture of the model as each backend ran it, and its compiled graphs.
  if (!models.empty())
    for (const ProgramView& p : progs) {
      const json& graph = (*models.front())["graph"];
      const NodeClasses classes = node_classes(*p.program, graph);
      body += "<h2>" + escape(p.backend) + ": how the model ran</h2>\n" + graph_legend(classes) + graph_svg(graph, classes);
      std::string links;
      for (const json& seg : *p.program)
        if (str(seg, "kind") == "graph")
          links += "<li>" + html::link(c.names.file(graph_page_name(p.backend, str(seg, "index"))),
                                        "graph " + str(seg, "index") + ": " + std::to_string(arr(seg, "nodes").size()) + " ops, " +
                                            std::to_string(arr(seg, "steps").size()) + " steps") + "</li>";
        else
          links += "<li>graph break " + break_doc_link(c, str(seg["event"], "code")) + " at " + escape(loc_text(seg["event"]["loc"])) + "</li>";
      body += "<ul class=\"graphs\">" + links + "</ul>\n";
    }

  // Compile time per pass (dynamo's compile_times()) and for kernels.
  std::map<std::string, std::tuple<int, int, double>> per_pass;  // runs, changed, ms
  std::vector<std::string> pass_order;
  for (const json* p : t.all("pass")) {
    const std::string name = str(*p, "name");
    if (!per_pass.count(name)) pass_order.push_back(name);
    auto& [runs, changed, ms] = per_pass[name];
    ++runs;
    changed += p->value("changed", false) ? 1 : 0;
    ms += num(*p, "ms");
  }
  rows.clear();
  for (const auto& name : pass_order) {
    const auto& [runs, changed, ms] = per_pass[name];
    rows.push_back({escape(name), std::to_string(runs), std::to_string(changed), escape(html::ms_text(ms))});
  }
  int modules = 0, hits = 0;
  double kernel_ms = 0;
  for (const json* k : t.all("kernel")) ++modules, hits += k->value("cache_hit", false) ? 1 : 0, kernel_ms += num(*k, "compile_ms");
  if (modules) rows.push_back({"kernel compile", std::to_string(modules) + " modules", std::to_string(hits) + " cache hits", escape(html::ms_text(kernel_ms))});
  if (!rows.empty()) body += "<h2>Compile time</h2>\n" + html::table({"pass", "runs", "changed the graph", "time"}, rows, "compile-times");

  // Failing cases.
  rows.clear();
  for (const json* r : t.all("check_report"))
    for (const json& b : arr((*r)["report"], "backends"))
      for (const json& f : arr(b, "failures")) {
        std::string outs;
        for (const json& o : arr(f, "outputs")) outs += (outs.empty() ? "" : ", ") + str(o, "output") + " (" + str(o, "oracle") + ")";
        if (f.contains("error")) outs += str(f["error"], "kind") + ": " + str(f["error"], "message");
        rows.push_back({escape(str(b, "name")), html::link(c.names.file("failures") + "#" + failure_anchor(str(b, "name"), f), "case " + str(f, "case")), escape(outs)});
      }
  if (!rows.empty()) body += "<h2>Failing cases</h2>\n" + html::table({"backend", "case", "what failed"}, rows, "failing-cases");

  // Fuzz cases and reduce steps.
  const auto fuzz = t.all("fuzz_case");
  if (!fuzz.empty()) {
    std::map<std::string, int> outcomes;
    std::map<std::string, int> hit_counts;
    for (const json* f : fuzz) {
      ++outcomes[str(*f, "outcome")];
      for (const json& k : arr(*f, "hits")) ++hit_counts[k.get<std::string>()];
    }
    rows.clear();
    for (const auto& [o, n] : outcomes) rows.push_back({escape(o), std::to_string(n)});
    body += "<h2>Fuzz cases</h2>\n" + html::table({"outcome", "cases"}, rows, "fuzz-outcomes");
    rows.clear();
    for (const auto& [k, n] : hit_counts) rows.push_back({"<code>" + escape(k) + "</code>", std::to_string(n)});
    if (!rows.empty()) body += html::table({"signature", "hits"}, rows, "fuzz-signatures");
  }
  rows.clear();
  for (const json* s : t.all("reduce_step"))
    rows.push_back({escape(str(*s, "phase")), str(*s, "nodes_left"), str(*s, "checks"), s->value("accepted", false) ? "accepted" : "", escape(g3(num(*s, "elapsed_s")))});
  if (!rows.empty()) body += "<h2>Reduce steps</h2>\n" + html::table({"phase", "nodes left", "checks", "", "seconds"}, rows, "reduce-steps");

  return html::page("gbcheck report", c.nav, body);
}

}  // namespace

std::string graph_break_anchor(const std::string& docs_markdown, const std::string& code) {
  if (code.empty()) return "";
  const std::string heading = "\n## " + code + ":";
  const size_t at = docs_markdown.find(heading);
  if (at == std::string::npos) return "";
  const size_t start = at + 4, end = docs_markdown.find('\n', start);
  return heading_anchor(docs_markdown.substr(start, end - start));
}

std::string default_docs_dir() {
  std::error_code ec;
  const std::filesystem::path docs = std::filesystem::path(config_dir()).parent_path() / "docs";
  return std::filesystem::exists(docs / "graph-breaks.md", ec) ? docs.string() : "";
}

std::vector<SitePage> trace_site(const Trace& trace, const SiteNames& names, const std::string& docs_dir) {
  Context c{trace, names, docs_dir.empty() ? "" : read_text((std::filesystem::path(docs_dir) / "graph-breaks.md").string()), "", {}};
  c.cwd = str(*trace.all("trace_start").front(), "cwd");
  c.nav = {{names.file("index"), "index"}, {names.file("breaks"), "breaks & fallbacks"}, {names.file("failures"), "failures"},
           {names.file("passes"), "passes"}};
  if (!c.docs_markdown.empty()) c.nav.push_back({names.file("graph-breaks"), "codes"});
  const std::vector<ProgramView> progs = programs(trace);
  std::vector<SitePage> pages;
  pages.push_back({names.file("index"), index_page(c, progs)});
  for (const ProgramView& p : progs)
    for (const json& seg : *p.program)
      if (str(seg, "kind") == "graph")
        pages.push_back({names.file(graph_page_name(p.backend, str(seg, "index"))), graph_page(c, p.backend, seg)});
  pages.push_back({names.file("breaks"), breaks_page(c)});
  pages.push_back({names.file("failures"), failures_page(c)});
  pages.push_back({names.file("passes"), passes_page(c)});
  if (!c.docs_markdown.empty()) pages.push_back({names.file("graph-breaks"), docs_page(c)});
  return pages;
}

}  // namespace gbc
