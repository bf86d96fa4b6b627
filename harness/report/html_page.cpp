#include "harness/report/html_page.h"

#include <cstdio>

#include "compiler/support/markup_escape.h"

namespace gbc::html {
namespace {

constexpr const char* kStyle = R"CSS(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1f2328;background:#fff}
nav{background:#24292f;padding:8px 16px}nav a{color:#fff;margin-right:16px;text-decoration:none}
main{padding:16px 24px;max-width:1400px}h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
pre{background:#f6f8fa;padding:8px;overflow:auto;max-height:600px;margin:4px 0}code{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
details{margin:4px 0}summary{cursor:pointer;color:#0969da}
.badge{display:inline-block;padding:0 8px;border-radius:10px;color:#fff;font-weight:600;font-size:12px}
.pass{background:#1a7f37}.fail{background:#cf222e}.other{background:#6e7781}
.kw{color:#cf222e}.ty{color:#8250df}.cm{color:#6e7781}.nu{color:#0550ae}
.legend span{display:inline-block;padding:0 6px;margin-right:6px;border:1px solid #999}
.muted{color:#6e7781}svg{max-width:100%;height:auto;border:1px solid #d0d7de;background:#fff}
)CSS";

// Highlights C/C++/CUDA keywords in <code class="cpp"> blocks: a tokenizer, not a parser.
constexpr const char* kScript = R"JS(
(function(){
  var kw=/^(if|else|for|while|return|const|static|inline|extern|struct|void|auto|break|continue|template|typename|namespace|using|__global__|__device__|__restrict__|restrict)$/;
  var ty=/^(int|int64_t|int32_t|uint8_t|float|double|bool|char|size_t|half|long|unsigned)$/;
  function esc(s){return s.replace(/&/g,'&amp;').replace(/</g,'&lt;').replace(/>/g,'&gt;');}
  document.querySelectorAll('code.cpp').forEach(function(el){
    var src=el.textContent,out='',re=/(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|([A-Za-z_]\w*)|(\d[\w.]*)|([\s\S])/g,m;
    while((m=re.exec(src))!==null){
      if(m[1])out+='<span class="cm">'+esc(m[1])+'</span>';
      else if(m[2])out+=kw.test(m[2])?'<span class="kw">'+m[2]+'</span>':ty.test(m[2])?'<span class="ty">'+m[2]+'</span>':m[2];
      else if(m[3])out+='<span class="nu">'+esc(m[3])+'</span>';
      else out+=esc(m[4]);
    }
    el.innerHTML=out;el.setAttribute('data-highlighted','1');
  });
})();
)JS";

}  // namespace

std::string escape(const std::string& text) { return markup_escape(text, Markup::Html); }

std::string page(const std::string& title, const std::vector<std::pair<std::string, std::string>>& nav,
                 const std::string& body) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + escape(title) +
                    "</title>\n<style>" + kStyle + "</style></head>\n<body><nav>";
  for (const auto& [href, label] : nav) out += link(href, label);
  out += "</nav>\n<main>\n<h1>" + escape(title) + "</h1>\n" + body + "\n</main>\n<script>" + kScript + "</script>\n</body></html>\n";
  return out;
}

std::string code_block(const std::string& summary, const std::string& code, const std::string& lang, bool open) {
  return std::string("<details") + (open ? " open" : "") + "><summary>" + escape(summary) + "</summary><pre><code class=\"" +
         escape(lang) + "\">" + escape(code) + "</code></pre></details>\n";
}

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                  const std::string& css_class) {
  std::string out = "<table" + (css_class.empty() ? "" : " class=\"" + escape(css_class) + "\"") + "><tr>";
  for (const auto& h : header) out += "<th>" + escape(h) + "</th>";
  out += "</tr>\n";
  for (const auto& row : rows) {
    out += "<tr>";
    for (const auto& cell : row) out += "<td>" + cell + "</td>";
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

std::string link(const std::string& href, const std::string& label) {
  return "<a href=\"" + escape(href) + "\">" + escape(label) + "</a>";
}

std::string badge(const std::string& verdict) {
  const std::string cls = verdict == "PASS" ? "pass" : verdict == "FAIL" ? "fail" : "other";
  return "<span class=\"badge " + cls + "\">" + escape(verdict) + "</span>";
}

std::string ms_text(double ms) {
  char buf[32];
  if (ms >= 1000) std::snprintf(buf, sizeof buf, "%.2f s", ms / 1000);
  else if (ms >= 1) std::snprintf(buf, sizeof buf, "%.1f ms", ms);
  else std::snprintf(buf, sizeof buf, "%.3f ms", ms);  // most passes on small graphs
  return buf;
}

}  // namespace gbc::html
