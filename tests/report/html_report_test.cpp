// The structured trace and the HTML report: escaping, the graph picture's layout and colours, a
// trace read back after a kill (a cut last line), and end to end through the gbcheck binary:
// `--trace DIR` writes the events docs/report.md lists, `gbcheck report DIR -o OUT` and `--html`
// write pages that name the graph break with its line and docs link, the kernels with their source,
// a failing fault-injected model's worst element, tolerance that would pass and replay command, and
// a recurrent model's drift plot; bench, reduce (its steps) and fuzz (its cases) trace too. The browser test (browser_report_test.py) loads these pages.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "compiler/support/markup_escape.h"
#include "compiler/support/trace.h"
#include "harness/report/graph_svg.h"
#include "harness/report/html_page.h"
#include "harness/report/trace_reader.h"
#include "harness/report/trace_site.h"
#include "tests/support/run_command.h"
#include "tests/support/temp_dir.h"

namespace gbc {
namespace {

using testing::run_gbcheck_in_source_tree;
using testing::TempDir;

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(HtmlPage, EscapesEveryCharacterThatCouldOpenMarkup) {
  EXPECT_EQ(html::escape("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;");
  const std::string page = html::page("a<b", {{"x.html?a=1&b=2", "<nav>"}}, "");
  EXPECT_NE(page.find("<title>a&lt;b</title>"), std::string::npos);
  EXPECT_NE(page.find("href=\"x.html?a=1&amp;b=2\""), std::string::npos);
  EXPECT_EQ(page.find("<nav>\""), std::string::npos);
}

TEST(MarkupEscape, XmlWritesApostropheAsEntityAndReplacesTheControlCharactersXmlForbids) {
  const std::string text = std::string("it's <a> & \"b\"\n\t") + '\x01' + '\x1f' + "\r";
  EXPECT_EQ(markup_escape(text, Markup::Xml), "it&apos;s &lt;a&gt; &amp; &quot;b&quot;\n\t??\r");
  // HTML keeps control characters: a page shows them as text, and no parser rejects them.
  EXPECT_EQ(markup_escape(text, Markup::Html), std::string("it&#39;s &lt;a&gt; &amp; &quot;b&quot;\n\t") + '\x01' + '\x1f' + "\r");
}

TEST(GraphSvg, LayersNodesBelowWhatTheyReadAndColoursThemByHowTheyRan) {
  const nlohmann::json graph = {
      {"inputs", {{{"id", "x"}, {"role", "input"}}}},
      {"nodes",
       {{{"id", "a<b"}, {"op", "relu"}, {"reads", {"x"}}},
        {{"id", "p"}, {"op", "print"}, {"reads", {"a<b"}}},
        {{"id", "y"}, {"op", "exp"}, {"reads", {"a<b"}}},
        {{"id", "z"}, {"op", "matmul"}, {"reads", {"y", "x"}}}}}};
  const std::string svg = graph_svg(graph, {{"a<b", "kernel-0"}, {"p", "break"}, {"z", "extern"}, {"x", "input"}});
  EXPECT_NE(svg.find("data-id=\"a&lt;b\""), std::string::npos);
  EXPECT_EQ(svg.find("a<b"), std::string::npos) << "an unescaped label";
  EXPECT_NE(svg.find("class=\"node break\" data-id=\"p\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"node extern\" data-id=\"z\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"node aten\" data-id=\"y\""), std::string::npos);  // unclassified: ATen
  auto y_of = [&](const std::string& id) {
    std::smatch m;
    const std::regex re("data-id=\"" + id + "\"><title>[^<]*</title><rect x=\"\\d+\" y=\"(\\d+)\"");
    EXPECT_TRUE(std::regex_search(svg, m, re)) << id;
    return std::stoi(m[1]);
  };
  EXPECT_LT(y_of("x"), y_of("a&lt;b"));
  EXPECT_LT(y_of("a&lt;b"), y_of("y"));
  EXPECT_LT(y_of("y"), y_of("z"));
  EXPECT_EQ(y_of("p"), y_of("y"));
}

TEST(TraceReader, KeepsTheEventsOfAKilledRunAndCountsTheCutLine) {
  TempDir dir("trace-cut");
  dir.file(trace::kFileName, std::string("{\"event\":\"trace_start\",\"schema\":\"") + trace::kSchema +
                                 "\",\"command\":\"gbcheck x\"}\n{\"event\":\"pass\",\"name\":\"dce\"}\n{\"event\":\"pa");
  const Trace t = read_trace(dir.root().string());
  EXPECT_EQ(t.events.size(), 2u);
  EXPECT_EQ(t.unreadable_lines, 1);
  EXPECT_FALSE(t.finished);
  const auto pages = trace_site(t, SiteNames{}, "");
  ASSERT_FALSE(pages.empty());
  EXPECT_NE(pages.front().html.find("did not finish"), std::string::npos);
}

TEST(TraceReader, RejectsAFolderWithoutATraceAndAnotherSchema) {
  TempDir dir("trace-none");
  EXPECT_THROW(read_trace(dir.root().string()), std::runtime_error);
  dir.file(trace::kFileName, "{\"event\":\"trace_start\",\"schema\":\"gbcheck.trace/v999\"}\n");
  EXPECT_THROW(read_trace(dir.root().string()), std::runtime_error);
  const auto r = run_gbcheck_in_source_tree("report " + dir.path("nothing") + " -o " + dir.path("out"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no trace here"), std::string::npos) << r.output;
}

TEST(GraphBreakAnchor, IsTheDocsHeadingAnchor) {
  const std::string md = "# x\n\n## GB001: print\ntext\n## FB002: cache_size_limit reached\n";
  EXPECT_EQ(graph_break_anchor(md, "GB001"), "gb001-print");
  EXPECT_EQ(graph_break_anchor(md, "FB002"), "fb002-cache_size_limit-reached");
  EXPECT_EQ(graph_break_anchor(md, "GB999"), "");
}

TEST(TraceCommand, TracesACheckAndRendersItsGraphBreakKernelsAndPasses) {
  TempDir dir("trace-check");
  const auto run = run_gbcheck_in_source_tree("corpus/docs/print_break.yaml --backend gbc --trace " + dir.path("t"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const Trace t = read_trace(dir.path("t"));
  EXPECT_TRUE(t.finished);
  EXPECT_EQ(t.exit_code, 0);
  for (const char* event : {"trace_start", "model_loaded", "pass", "partition", "kernel", "guards", "compile_event", "case", "program",
                            "check_report", "trace_end"})
    EXPECT_FALSE(t.all(event).empty()) << "no " << event << " event";
  for (const nlohmann::json* k : t.all("kernel")) EXPECT_NE(k->value("source", "").find("void"), std::string::npos);
  EXPECT_EQ(t.all("case").size(), 2u);  // check: {cases: 2}, one backend

  const auto rep = run_gbcheck_in_source_tree("report " + dir.path("t") + " -o " + dir.path("site"));
  ASSERT_EQ(rep.exit_code, 0) << rep.output;
  const std::string breaks = read(dir.path("site/breaks.html"));
  EXPECT_NE(breaks.find("href=\"graph-breaks.html#gb001-print\""), std::string::npos);
  EXPECT_NE(breaks.find("corpus/docs/print_break.yaml:8:"), std::string::npos);  // the print's line
  EXPECT_NE(breaks.find("&gt;8 | "), std::string::npos);                      // the excerpt marks it
  EXPECT_NE(read(dir.path("site/graph-breaks.html")).find("id=\"gb001-print\""), std::string::npos);
  const std::string index = read(dir.path("site/index.html"));
  EXPECT_NE(index.find("class=\"node break\""), std::string::npos);
  EXPECT_NE(index.find("href=\"graph-gbc-0.html\""), std::string::npos);
  const std::string graph = read(dir.path("site/graph-gbc-0.html"));
  EXPECT_NE(graph.find("<code class=\"cpp\">"), std::string::npos);
  EXPECT_NE(graph.find("print_break.yaml:7:"), std::string::npos);  // relu's line
  EXPECT_NE(read(dir.path("site/passes.html")).find("Passes and partitions"), std::string::npos);
}

TEST(TraceCommand, HtmlOnAFailingCheckShowsTheWorstElementTheToleranceThatPassesAndTheReplay) {
  TempDir dir("trace-fail");
  std::filesystem::create_directories(dir.path("r"));
  const auto run = run_gbcheck_in_source_tree("corpus/faults/reduce-bound.yaml --inject-fault reduce-bound --backend gbc --html " +
                                              dir.path("r/run.html"));
  ASSERT_EQ(run.exit_code, 1) << run.output;
  EXPECT_NE(run.output.find("report: " + dir.path("r/run.html")), std::string::npos) << run.output;
  const std::string failures = read(dir.path("r/run-failures.html"));
  EXPECT_NE(failures.find("worst element"), std::string::npos);
  EXPECT_NE(failures.find("would pass with"), std::string::npos);
  EXPECT_NE(failures.find("--inject-fault reduce-bound"), std::string::npos);
  EXPECT_NE(failures.find("gbcheck reduce corpus/faults/reduce-bound.yaml"), std::string::npos);
  EXPECT_NE(read(dir.path("r/run.html")).find("href=\"run-failures.html#fail-gbc-"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.path("t"))) << "--html alone leaves no trace folder behind";
}

TEST(TraceCommand, HtmlOfARecurrentModelDrawsItsDriftPlot) {
  TempDir dir("trace-drift");
  const auto run = run_gbcheck_in_source_tree("corpus/docs/rnn.yaml --backend gbc -n 2 -q --html " + dir.path("d.html"));
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.output;
  const std::string failures = read(dir.path("d-failures.html"));
  EXPECT_NE(failures.find("Drift over the steps: gbc"), std::string::npos);
  EXPECT_NE(failures.find("<svg"), std::string::npos);
}

TEST(TraceCommand, TracesBenchReduceStepsAndFuzzCases) {
  TempDir dir("trace-more");
  auto run = run_gbcheck_in_source_tree("bench corpus/docs/print_break.yaml --backend gbc --trace " + dir.path("bench"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  EXPECT_EQ(read_trace(dir.path("bench")).all("bench_report").size(), 1u);

  run = run_gbcheck_in_source_tree("reduce corpus/faults/reduce-bound.yaml --inject-fault reduce-bound --backend gbc --max-checks 6 --out " +
                                   dir.path("reduced") + " --trace " + dir.path("reduce"));
  ASSERT_TRUE(run.exit_code == 0 || run.exit_code == 1) << run.output;
  const Trace reduce = read_trace(dir.path("reduce"));
  EXPECT_FALSE(reduce.all("reduce_step").empty());
  EXPECT_EQ(reduce.all("reduce_result").size(), 1u);
  const auto site = trace_site(reduce, SiteNames{}, "");
  EXPECT_NE(site.front().html.find("Reduce steps"), std::string::npos);

  run = run_gbcheck_in_source_tree("fuzz --out " + dir.path("fuzz") + " --cases 2 --backends gbc --max-nodes 6 --graph-cases 1 "
                                   "--reduce-checks 0 --quiet --trace " + dir.path("fuzz-trace"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const Trace fuzz = read_trace(dir.path("fuzz-trace"));
  EXPECT_EQ(fuzz.all("fuzz_case").size(), 2u);
  EXPECT_NE(trace_site(fuzz, SiteNames{}, "").front().html.find("Fuzz cases"), std::string::npos);
}

TEST(TraceCommand, EnvironmentVariableTracesExplain) {
  TempDir dir("trace-env");
  const auto run = run_gbcheck_in_source_tree("explain corpus/docs/print_break.yaml --html " + dir.path("e.html"),
                                              "GBCHECK_TRACE_DIR=" + dir.path("t"));
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const Trace t = read_trace(dir.path("t"));
  EXPECT_FALSE(t.all("explain_report").empty());
  EXPECT_FALSE(t.all("program").empty());
  EXPECT_NE(read(dir.path("e.html")).find("EXPLAINED"), std::string::npos);
}

}  // namespace
}  // namespace gbc
