#include "harness/report/store_site.h"

#include <filesystem>

#include "compiler/runtime/graph_breaks.h"
#include "harness/model/model_loader.h"
#include "harness/report/graph_json.h"
#include "harness/report/graph_svg.h"
#include "harness/report/html_page.h"

namespace gbc {
namespace {

namespace fs = std::filesystem;
using html::escape;

// A link to a file of the store's folder, relative to the report's folder.
std::string file_link(const std::string& store_folder, const std::string& report_folder, const std::string& rel, const std::string& label) {
  std::error_code ec;
  const fs::path target = fs::path(store_folder) / rel;
  if (!fs::exists(target, ec)) return "";
  fs::path href = fs::relative(fs::absolute(target, ec), fs::absolute(report_folder, ec), ec);
  if (href.empty()) href = fs::absolute(target, ec);
  return html::link(href.generic_string(), label);
}

// The reduced model's picture: nodes that break a graph red, the rest as ATen ran them.
std::string reduced_picture(const std::string& model_path) {
  std::error_code ec;
  if (!fs::exists(model_path, ec)) return "";
  try {
    const Model m = load_model_file(model_path);
    NodeClasses classes;
    const nlohmann::json graph = graph_to_json(m.graph);
    for (size_t i = 0; i < m.graph.body.nodes.size(); ++i)
      if (graph_break(m.graph, m.graph.body.nodes[i], {})) classes[graph["nodes"][i].value("id", "")] = "break";
    for (const auto& in : graph["inputs"]) classes[in.value("id", "")] = in.value("role", "input") == "param" ? "param" : "input";
    return graph_svg(graph, classes);
  } catch (const std::exception& e) {
    return "<p class=\"muted\">the reduced model does not load: " + escape(e.what()) + "</p>";
  }
}

const RunInfo* find_run(const StoreReport& r, const std::string& uid) {
  for (const RunInfo& run : r.runs)
    if (run.uid == uid) return &run;
  return nullptr;
}

std::string signature_section(const StoreReport& r, const std::string& title, const std::string& status,
                              const std::vector<SignatureInfo>& sigs, const std::string& store_folder, const std::string& report_folder) {
  std::string body = "<h2 id=\"" + escape(status) + "\">" + escape(title) + " (" + std::to_string(sigs.size()) + ")</h2>\n";
  if (sigs.empty()) return body + "<p class=\"muted\">none</p>\n";
  std::vector<std::vector<std::string>> rows;
  for (const SignatureInfo& s : sigs) {
    std::string links;
    if (!s.repro_path.empty())
      for (const auto& [file, label] : std::vector<std::pair<std::string, std::string>>{
               {"", "repro folder"}, {"README.md", "README"}, {"original.yaml", "original.yaml"}, {"reduced/model.yaml", "reduced model"}}) {
        const std::string l = file_link(store_folder, report_folder, s.repro_path + (file.empty() ? "" : "/" + file), label);
        if (!l.empty()) links += l + " ";
      }
    rows.push_back({"<a href=\"#sig-" + escape(s.key) + "\"><code>" + escape(s.key) + "</code></a>", escape(s.kind), escape(s.backend),
                    escape(s.summary), std::to_string(s.hit_count), escape(s.first_seen), escape(s.last_seen), links});
  }
  body += html::table({"signature", "kind", "backend", "summary", "hits", "first seen", "last seen", "repro"}, rows, "signatures " + status);
  for (const SignatureInfo& s : sigs) {
    body += "<div class=\"signature\" id=\"sig-" + escape(s.key) + "\"><h3><code>" + escape(s.key) + "</code> " + escape(s.summary) + "</h3>";
    body += "<p>replay: <code class=\"replay\">" + escape(replay_hint(s, find_run(r, s.first_run))) + "</code></p>";
    if (!s.repro_path.empty()) body += reduced_picture((fs::path(store_folder) / s.repro_path / "reduced" / "model.yaml").string());
    else body += "<p class=\"muted\">not reduced (" + escape(s.reduce_state.empty() ? "no repro folder" : s.reduce_state) + ")</p>";
    body += "</div>\n";
  }
  return body;
}

}  // namespace

std::vector<SitePage> store_site(const StoreReport& r, const std::string& store_folder, const std::string& index_path) {
  const std::string report_folder = site_folder(index_path);
  const SiteNames names = SiteNames::for_file(index_path);
  std::string body = "<p>store <code>" + escape(r.store_path) + "</code>, latest generation " + std::to_string(r.latest_generation) + "</p>\n";
  body += html::table({"cases", "failed", "invalid", "signatures", "new", "known (seen again)", "fixed"},
                      {{std::to_string(r.totals.cases), std::to_string(r.totals.failed), std::to_string(r.totals.invalid),
                        std::to_string(r.totals.signatures), std::to_string(r.fresh.size()), std::to_string(r.known.size()),
                        std::to_string(r.fixed.size())}},
                      "totals");
  std::vector<std::vector<std::string>> rows;
  for (const RunInfo& run : r.runs) {
    const std::string fault = injected_fault(run);
    rows.push_back({"<code>" + escape(run.uid) + "</code>", std::to_string(run.generation), escape(run.started_at), escape(run.status),
                    escape(run.backends), std::to_string(run.shard_index) + "/" + std::to_string(run.shard_count),
                    fault.empty() ? "" : "<b>injected fault " + escape(fault) + "</b>"});
  }
  body += "<h2>Runs</h2>\n" + html::table({"run", "generation", "started", "status", "backends", "shard", ""}, rows, "runs");
  body += signature_section(r, "New signatures", "new", r.fresh, store_folder, report_folder);
  body += signature_section(r, "Known signatures seen again", "known", r.known, store_folder, report_folder);
  body += signature_section(r, "Fixed signatures", "fixed", r.fixed, store_folder, report_folder);
  return {{names.file("index"), html::page("gbcheck fuzz store", {{names.file("index"), "index"}, {"#new", "new"}, {"#known", "known"}, {"#fixed", "fixed"}}, body)}};
}

}  // namespace gbc
