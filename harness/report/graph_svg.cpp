#include "harness/report/graph_svg.h"

#include <algorithm>
#include <set>

#include "harness/report/html_page.h"

namespace gbc {
namespace {

constexpr int kBoxW = 132, kBoxH = 30, kGapX = 14, kGapY = 38, kMargin = 12;
const char* const kKernelColours[] = {"#a5d8ff", "#b2f2bb", "#ffec99", "#d0bfff", "#99e9f2", "#fcc2d7", "#c0eb75", "#e9ecef"};

std::string fill_of(const std::string& cls) {
  if (cls.rfind("kernel-", 0) == 0) {
    size_t k = static_cast<size_t>(std::max(0, std::atoi(cls.c_str() + 7)));
    return kKernelColours[k % 7];
  }
  if (cls == "extern") return "#ffc078";
  if (cls == "break") return "#ff8787";
  if (cls == "input") return "#ffffff";
  if (cls == "param") return "#f8f9fa";
  return "#ced4da";  // aten, eager
}

std::string label_of(const std::string& cls) {
  if (cls.rfind("kernel-", 0) == 0) return "fused kernel " + cls.substr(7);
  if (cls == "extern") return "extern call";
  if (cls == "break") return "graph break";
  if (cls == "input") return "input";
  if (cls == "param") return "param";
  return "ATen / eager";
}

struct Placed {
  std::string id, op, cls, title;
  std::vector<std::string> reads;
  int layer = 0, slot = 0;
};

std::string shorten(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 1) + "~"; }

}  // namespace

std::string graph_svg(const nlohmann::json& graph, const NodeClasses& classes) {
  std::vector<Placed> nodes;
  std::map<std::string, size_t> producer;  // value name -> node index
  for (const auto& in : graph.value("inputs", nlohmann::json::array())) {
    Placed p;
    p.id = in.value("id", "");
    p.op = in.value("role", "input");
    p.cls = p.op == "param" ? "param" : "input";
    p.title = p.op + " " + p.id;
    producer[p.id] = nodes.size();
    nodes.push_back(p);
  }
  const size_t first_body = nodes.size();
  for (const auto& n : graph.value("nodes", nlohmann::json::array())) {
    Placed p;
    p.id = n.value("id", "");
    p.op = n.value("op", "");
    auto c = classes.find(p.id);
    p.cls = c == classes.end() ? "aten" : c->second;
    p.title = p.id + " = " + p.op;
    if (n.contains("loc") && n["loc"].is_object())
      p.title += "  (" + n["loc"].value("file", "") + ":" + std::to_string(n["loc"].value("line", 0)) + ")";
    for (const auto& r : n.value("reads", nlohmann::json::array())) p.reads.push_back(r.get<std::string>());
    for (const auto& o : n.value("outputs", nlohmann::json::array())) producer[o.get<std::string>()] = nodes.size();
    producer.emplace(p.id, nodes.size());
    nodes.push_back(p);
  }
  // Layers: body nodes below what they read; inputs one layer above their first reader.
  for (size_t i = first_body; i < nodes.size(); ++i) {
    int layer = 1;
    for (const auto& r : nodes[i].reads) {
      auto it = producer.find(r);
      if (it != producer.end() && it->second >= first_body && it->second < i) layer = std::max(layer, nodes[it->second].layer + 1);
    }
    nodes[i].layer = layer;
  }
  for (size_t i = 0; i < first_body; ++i) {
    int first_reader = 1 << 30;
    for (size_t j = first_body; j < nodes.size(); ++j)
      for (const auto& r : nodes[j].reads)
        if (r == nodes[i].id) first_reader = std::min(first_reader, nodes[j].layer);
    nodes[i].layer = first_reader == (1 << 30) ? 0 : first_reader - 1;
  }
  int layers = 0;
  for (const auto& p : nodes) layers = std::max(layers, p.layer + 1);
  std::vector<int> width(static_cast<size_t>(layers), 0);
  for (auto& p : nodes) p.slot = width[static_cast<size_t>(p.layer)]++;
  const int max_width = width.empty() ? 1 : *std::max_element(width.begin(), width.end());
  const int W = kMargin * 2 + max_width * (kBoxW + kGapX), H = kMargin * 2 + layers * (kBoxH + kGapY);
  auto x_of = [&](const Placed& p) {
    const int row = width[static_cast<size_t>(p.layer)];
    return kMargin + (max_width - row) * (kBoxW + kGapX) / 2 + p.slot * (kBoxW + kGapX);
  };
  auto y_of = [&](const Placed& p) { return kMargin + p.layer * (kBoxH + kGapY); };

  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"graph\" width=\"" + std::to_string(W) + "\" height=\"" +
                    std::to_string(H) + "\" viewBox=\"0 0 " + std::to_string(W) + " " + std::to_string(H) +
                    "\" font-family=\"monospace\" font-size=\"11\">\n<g fill=\"none\" stroke=\"#868e96\">";
  for (const auto& p : nodes) {
    for (const auto& r : p.reads) {
      auto it = producer.find(r);
      if (it == producer.end()) continue;
      const Placed& from = nodes[it->second];
      const int x1 = x_of(from) + kBoxW / 2, y1 = y_of(from) + kBoxH, x2 = x_of(p) + kBoxW / 2, y2 = y_of(p);
      const int ym = (y1 + y2) / 2;
      svg += "<path d=\"M" + std::to_string(x1) + "," + std::to_string(y1) + " C" + std::to_string(x1) + "," + std::to_string(ym) +
             " " + std::to_string(x2) + "," + std::to_string(ym) + " " + std::to_string(x2) + "," + std::to_string(y2) + "\"/>";
    }
  }
  svg += "</g>\n";
  for (const auto& p : nodes) {
    const int x = x_of(p), y = y_of(p);
    svg += "<g class=\"node " + html::escape(p.cls) + "\" data-id=\"" + html::escape(p.id) + "\"><title>" + html::escape(p.title) +
           "</title><rect x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) + "\" width=\"" + std::to_string(kBoxW) +
           "\" height=\"" + std::to_string(kBoxH) + "\" rx=\"4\" fill=\"" + fill_of(p.cls) + "\" stroke=\"#495057\"" +
           (p.cls == "input" || p.cls == "param" ? " stroke-dasharray=\"3,2\"" : "") + "/><text x=\"" + std::to_string(x + 6) +
           "\" y=\"" + std::to_string(y + 12) + "\">" + html::escape(shorten(p.id, 20)) + "</text><text x=\"" +
           std::to_string(x + 6) + "\" y=\"" + std::to_string(y + 25) + "\" fill=\"#495057\">" + html::escape(shorten(p.op, 20)) +
           "</text></g>\n";
  }
  return svg + "</svg>\n";
}

std::string graph_legend(const NodeClasses& classes) {
  std::set<std::string> used = {"aten"};
  for (const auto& [id, cls] : classes) used.insert(cls);
  std::string out = "<div class=\"legend\">";
  for (const auto& cls : used)
    out += "<span style=\"background:" + fill_of(cls) + "\">" + html::escape(label_of(cls)) + "</span>";
  return out + "</div>\n";
}

}  // namespace gbc
